"""Approvals end to end: the real engine on a scripted server asks, the modal answers, and the
answer changes what runs and what the model reads next."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, engine_app, press_alone, wait_until


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


async def _submit(pilot: Any, app: Any, text: str) -> None:
    assert await wait_until(pilot, lambda: app.runner.session is not None)
    await pilot.press(*text, "enter")


async def test_approve_once_runs_the_command(tmp_path: Path) -> None:
    clock = FakeClock()
    with ScriptedServer({"responses": [bash("echo hi > a.txt"), {"content": "done"}]}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock, approval="untrusted")
        async with app.run_test() as pilot:
            await _submit(pilot, app, "write a")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await press_alone(pilot, clock, "y")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            await pilot.press("ctrl+q")
    assert (app.settings.workspace / "a.txt").read_text() == "hi\n"
    assert [e.payload["decision"] for e in rec.of("approval_resolved")] == ["approved"]


async def test_approve_for_session_is_not_asked_again_for_the_same_command(tmp_path: Path) -> None:
    clock = FakeClock()
    script = [bash("echo hi >> a.txt"), bash("echo hi >> a.txt"), {"content": "done"}]
    with ScriptedServer({"responses": script}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock, approval="untrusted")
        async with app.run_test() as pilot:
            await _submit(pilot, app, "append twice")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await press_alone(pilot, clock, "a", "a")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            await pilot.press("ctrl+q")
    assert len(rec.of("approval_requested")) == 1
    assert (app.settings.workspace / "a.txt").read_text() == "hi\nhi\n"


async def test_a_denial_reason_reaches_the_models_next_request(tmp_path: Path) -> None:
    clock = FakeClock()
    with ScriptedServer({"responses": [bash("rm -rf src"), {"content": "ok"}]}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock, approval="untrusted")
        async with app.run_test() as pilot:
            await _submit(pilot, app, "clean up")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await press_alone(pilot, clock, "n")
            await pilot.press(*"keep src, delete build only", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            await pilot.press("ctrl+q")
        second = json.dumps(srv.requests[1]["messages"])
    assert "keep src, delete build only" in second
    assert rec.of("tool_result")[0].payload["status"] == "denied"


async def test_escape_on_the_modal_stops_the_turn(tmp_path: Path) -> None:
    clock = FakeClock()
    script = [bash("rm -rf src"), {"content": "should not be asked for"}]
    with ScriptedServer({"responses": script}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock, approval="untrusted")
        async with app.run_test() as pilot:
            await _submit(pilot, app, "clean up")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await press_alone(pilot, clock, "escape")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            await pilot.press("ctrl+q")
        requests = len(srv.requests)
    assert rec.of("turn_ended")[0].payload["reason"] == "stopped"
    assert requests == 1


async def test_a_session_grant_revoked_from_the_palette_asks_again(tmp_path: Path) -> None:
    clock = FakeClock()
    script = [
        bash("echo hi >> a.txt"),
        {"content": "one"},
        bash("echo hi >> a.txt"),
        {"content": "two"},
    ]
    with ScriptedServer({"responses": script}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock, approval="untrusted")
        async with app.run_test() as pilot:
            await _submit(pilot, app, "append")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await press_alone(pilot, clock, "a", "a")
            assert await wait_until(pilot, lambda: len(rec.of("turn_ended")) == 1 and not app.busy)
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*"revoke session grant")
            await pilot.pause(0.3)
            await pilot.press("enter")
            assert await wait_until(pilot, lambda: not app.runner.session.session_grants())
            await pilot.press(*"append again", "enter")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
            await press_alone(pilot, clock, "y")
            assert await wait_until(pilot, lambda: len(rec.of("turn_ended")) == 2)
            await pilot.press("ctrl+q")
    assert len(rec.of("approval_requested")) == 2
