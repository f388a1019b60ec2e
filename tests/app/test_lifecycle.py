"""Quitting cancels the turn, closes the session and leaves no thread or child process."""

from __future__ import annotations

import threading
from pathlib import Path

from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import child_pids, engine_app, wait_until


async def test_quit_mid_command_leaves_no_thread_or_child_process(tmp_path: Path) -> None:
    before = child_pids()
    script = {
        "responses": [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 120"}}]}]
    }
    with ScriptedServer(script) as srv:
        app, rec = engine_app(tmp_path, srv.url)
        async with app.run_test() as pilot:
            assert await wait_until(pilot, lambda: app.runner.session is not None)
            await pilot.press(*"wait", "enter")
            assert await wait_until(
                pilot,
                lambda: any(e.payload.get("status") == "running" for e in rec.of("tool_started")),
            )
            assert child_pids() - before  # the command really runs as a child
            # Mid-turn Ctrl+Q asks once (issue 21); the second press quits.
            await pilot.press("ctrl+q", "ctrl+q")
        engine_thread = app.runner.thread
    assert not engine_thread.is_alive()
    assert "cerveau-engine" not in [t.name for t in threading.enumerate()]
    assert child_pids() - before == set()
