"""Snapshots of the header and the status bar mid-round at 80x24 and 140x45 (issue 21): the
turn's time, this round's tokens and the live rate, the prompt read in ctx, a grant in force,
and at 80 columns the mode, the action mode and the server all on screen. Accept new ones with
`--snapshot-update` after reading them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.app.messages import SessionReady

from .helpers import FakeClock, viewer_app

READY = {
    "server_url": "http://127.0.0.1:8080",
    "model": "Qwen2.5-Coder-7B.gguf",
    "n_ctx": 32768,
    "sandbox_backend": "bubblewrap",
    "sandbox_enforced": True,
    "action_mode": "constrained",
    "managed": False,
}


@pytest.mark.parametrize("size", [(80, 24), (140, 45)], ids=["80x24", "140x45"])
def test_header_and_status_bar_mid_round(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    clock = FakeClock()
    (tmp_path / "ws").mkdir()
    app = viewer_app(tmp_path / "ws", clock)
    app.animation_level = "none"

    async def run_before(pilot: Any) -> None:
        app._from_engine(SessionReady(READY))
        await pilot.pause(0.2)
        app.bus.emit("turn_started", {"input": "add a --json flag to the report command"})
        app.bus.emit("iteration_started", {"iteration": 1})
        await pilot.pause(0.2)  # applied before the clock moves: the turn began at its time
        app.bus.emit(
            "approval_resolved",
            {"request_id": "r1", "call_id": "c0", "decision": "approved_session",
             "scope": "network to pypi.org:443"},
        )  # fmt: skip
        app.bus.emit("usage", {"context_tokens": 6100, "n_ctx": 32768})
        clock.advance(75)
        app.bus.emit("iteration_started", {"iteration": 2})
        await pilot.pause(0.1)
        for n in range(1, 9):
            clock.advance(1.0)
            app.bus.emit("reply_progress", {"tokens": 16 * n, "prompt_total": 6400})
            await pilot.pause(0.06)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
