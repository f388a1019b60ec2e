"""Snapshots of a round in progress at 80x24 and 140x45: the spinner and the round's time, the
call being written in its card, and the sandbox state still on screen at 80 columns. Accept new
ones with `--snapshot-update` after reading them."""

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
}
WRITING = {
    "tool_name": "write_file",
    "tool_chars": 1400,
    "tool_head": '{"path": "parser.py", "content": "def parse(',
    "tokens": 350,
}


@pytest.mark.parametrize("size", [(80, 24), (140, 45)], ids=["80x24", "140x45"])
def test_a_call_being_written_while_the_round_runs(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    clock = FakeClock()
    (tmp_path / "ws").mkdir()
    app = viewer_app(tmp_path / "ws", clock)
    app.animation_level = "none"

    async def run_before(pilot: Any) -> None:
        # As the engine thread hands it over: the header and the status bar both hear it.
        app._from_engine(SessionReady(READY))
        await pilot.pause(0.2)
        app.bus.emit("turn_started", {"input": "write a parser for the config format"})
        app.bus.emit("iteration_started", {"iteration": 1})
        await pilot.pause(0.2)
        clock.advance(12)
        app.bus.emit("reply_progress", WRITING)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
