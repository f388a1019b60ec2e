"""Pilot: the person presses `a` in the real dialog, and the NEXT matching command gets the room
that grant gave, verified on the host (issue 10: a session grant was accepted, then not applied)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, engine_app, press_alone, wait_until


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


async def test_a_session_grant_from_the_dialog_gives_the_next_command_its_room(
    tmp_path: Path,
) -> None:
    out = Path(
        tempfile.mkdtemp(prefix="cerveau-grant-tui-", dir="/var/tmp")
    )  # not /tmp: private there
    try:
        clock = FakeClock()
        script = [bash(f"touch {out}/a"), bash(f"touch {out}/b"), {"content": "done"}]
        with ScriptedServer({"responses": script}) as srv:
            app, rec = engine_app(
                tmp_path, srv.url, clock, approval="on-request", sandbox="workspace-write"
            )
            async with app.run_test() as pilot:
                assert await wait_until(pilot, lambda: app.runner.session is not None)
                await pilot.press(*"touch two files", "enter")
                assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
                await press_alone(pilot, clock, "a", "a")
                assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
                await pilot.press("ctrl+q")
        assert (out / "a").exists() and (out / "b").exists()
        assert len(rec.of("approval_requested")) == 1
        assert [e.payload["decision"] for e in rec.of("approval_resolved")] == ["approved_session"]
    finally:
        shutil.rmtree(out, ignore_errors=True)
