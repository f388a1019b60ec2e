"""The status bar's cache figure: the share of the last request's prompt the server reused."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.status_bar import StatusBar

from .helpers import viewer_app, wait_until


async def test_the_status_bar_shows_the_last_requests_cache_share(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        bar = app.query_one(StatusBar)
        app.bus.emit(
            "usage", {"prompt_n": 30, "cache_n": 970, "context_tokens": 1000, "n_ctx": 8192}
        )
        assert await wait_until(pilot, lambda: "cache 97%" in bar.render().plain)  # type: ignore[union-attr]
        app.bus.emit(
            "usage", {"prompt_n": 1000, "cache_n": 0, "context_tokens": 1000, "n_ctx": 8192}
        )
        assert await wait_until(pilot, lambda: "cache 0%" in bar.render().plain)  # type: ignore[union-attr]


async def test_no_figure_from_the_server_shows_no_cache_share(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        bar = app.query_one(StatusBar)
        app.bus.emit("usage", {"context_tokens": 1000, "n_ctx": 8192})
        assert await wait_until(pilot, lambda: "ctx 1,000" in bar.render().plain)  # type: ignore[union-attr]
        assert "cache" not in bar.render().plain  # type: ignore[union-attr]
