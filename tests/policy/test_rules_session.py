"""A lasting rule through real sessions: "always" in one, the next runs the command unasked."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApprovalDecision, ApprovalRequest, DenyAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


class Always:
    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision("approved_always")


def _session(ws: Path, user: Path, approver, command: str) -> Recorder:
    call = {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
    with ScriptedServer({"responses": [call, {"content": "ok"}]}) as srv:
        settings = load_settings(ws, environ={"CERVEAU_APPROVAL": '"untrusted"'}, user_config=user)
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, approver=approver, provider=LlamaProvider(srv.url))
        s.engine.run("go")
        s.close()
    return rec


def test_always_in_one_session_runs_unasked_in_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "home" / "config.toml"
    user.parent.mkdir()
    monkeypatch.setenv("CERVEAU_CONFIG", str(user))
    ws = tmp_path / "ws"
    ws.mkdir()
    first = _session(ws, user, Always(), "mkdir -p one")
    assert first.of("approval_resolved")[0].payload["scope"] == "commands starting with `mkdir`"
    assert (ws / "one").is_dir()
    second = _session(ws, user, DenyAll(), "mkdir -p two")  # asked, it would be denied
    assert (ws / "two").is_dir()
    assert not second.of("approval_requested")
    result = second.of("tool_result")[0].payload
    assert "always allowed in this workspace" in result["granted_by"]
