"""Ctrl+Q quits from anywhere, a dialog open included, asking once while a turn runs (issue 33:
with an approval open, Ctrl+Q seemed to do nothing: its question went to the chat under the
dialog, and the second press counted only within 5 s, which nothing said)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Static

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.screens.quit import QuitScreen
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, engine_app, wait_until

SCRIPT = {
    "responses": [{"tool_calls": [{"name": "bash", "arguments": {"command": "touch ran.txt"}}]}]
}


async def _at_the_dialog(pilot: Any, app: Any) -> None:
    assert await wait_until(pilot, lambda: app.runner.session is not None)
    await pilot.press(*"mark it", "enter")
    assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))


async def test_ctrl_q_at_an_approval_asks_on_top_and_says_how(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT) as srv:
        app, _rec = engine_app(tmp_path, srv.url, FakeClock(), approval="untrusted")
        async with app.run_test() as pilot:
            await _at_the_dialog(pilot, app)
            await pilot.press("ctrl+q")
            assert await wait_until(pilot, lambda: isinstance(app.screen, QuitScreen))
            said = " ".join(str(w.render()) for w in app.screen.query(Static))
            assert "the turn" not in said or "stopped" in said
            assert "Ctrl+Q again or y" in said and "answered no" in said
            await pilot.press("ctrl+q")
            assert await wait_until(pilot, lambda: app.exiting)


async def test_quitting_from_an_approval_answers_it_no(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT) as srv:
        app, rec = engine_app(tmp_path, srv.url, FakeClock(), approval="untrusted")
        async with app.run_test() as pilot:
            await _at_the_dialog(pilot, app)
            await pilot.press("ctrl+q")
            assert await wait_until(pilot, lambda: isinstance(app.screen, QuitScreen))
            await pilot.press("y")
            assert await wait_until(pilot, lambda: app.exiting)
        engine = app.runner.thread
    assert not engine.is_alive()
    decisions = [(e.payload["decision"], e.payload["reason"]) for e in rec.of("approval_resolved")]
    assert decisions == [("stopped", "quit")]
    assert not (app.settings.workspace / "ran.txt").exists()  # the command never ran


async def test_esc_at_the_question_stays_and_the_dialog_still_waits(tmp_path: Path) -> None:
    with ScriptedServer(SCRIPT) as srv:
        app, rec = engine_app(tmp_path, srv.url, FakeClock(), approval="untrusted")
        async with app.run_test() as pilot:
            await _at_the_dialog(pilot, app)
            await pilot.press("ctrl+q")
            assert await wait_until(pilot, lambda: isinstance(app.screen, QuitScreen))
            await pilot.press("escape")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            assert not app.exiting and not rec.of("approval_resolved")
            await pilot.press("ctrl+q", "ctrl+q")
            assert await wait_until(pilot, lambda: app.exiting)
