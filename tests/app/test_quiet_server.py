"""The status bar says "server quiet for 40 s" while the server sends only keep-alives, before the
call gives up at request_timeout_s: a spinner alone looks the same whether the server works or
hangs. The quiet comes from the provider (reply_progress `quiet_s`) and is counted on from there
on the injected clock; anything new from the server ends it."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.status_bar import StatusBar, StatusState, status_content

from .helpers import FakeClock, viewer_app, wait_until


def test_a_quiet_server_is_shown_beside_what_it_last_said() -> None:
    s = StatusState(
        phase="running", round_started=0.0, activity="prompt 4,096/9,000", quiet_since=60.0
    )
    assert "prompt 4,096/9,000 │ server quiet for 40 s" in status_content(s, now=100.0).plain


def test_a_long_quiet_reads_in_minutes() -> None:
    s = StatusState(phase="running", round_started=0.0, activity="x", quiet_since=0.0)
    assert "server quiet for 2m05s" in status_content(s, now=125.0).plain


def test_between_turns_nothing_is_said_of_quiet() -> None:
    s = StatusState(phase="ready", quiet_since=0.0)
    assert "quiet" not in status_content(s, now=100.0).plain


async def test_the_bar_counts_the_quiet_on_and_progress_ends_it(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(140, 45)) as pilot:
        bar = app.query_one(StatusBar)
        clock = FakeClock(500.0)
        bar.clock = clock
        text = lambda: bar.render().plain  # type: ignore[union-attr]  # noqa: E731
        app.bus.emit("turn_started", {"input": "read the logs"})
        app.bus.emit("iteration_started", {"iteration": 1})
        app.bus.emit("reply_progress", {"prompt_done": 4096, "prompt_total": 9000})
        assert await wait_until(pilot, lambda: "prompt 4,096/9,000" in text())
        assert "quiet" not in text()
        quiet = {"prompt_done": 4096, "prompt_total": 9000, "quiet_s": 20.0}
        app.bus.emit("reply_progress", quiet)
        assert await wait_until(pilot, lambda: "server quiet for 20 s" in text())
        clock.advance(20)
        bar._tick()
        assert await wait_until(pilot, lambda: "server quiet for 40 s" in text())
        app.bus.emit("reply_progress", {"prompt_done": 8192, "prompt_total": 9000})
        assert await wait_until(pilot, lambda: "prompt 8,192/9,000" in text())
        assert "quiet" not in text()
