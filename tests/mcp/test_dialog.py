"""The person's dialog for an MCP call, through a real session: it names the server and the
tool, shows the arguments, offers the tool then the whole server; "approve for the session" of
the tool lets its next call through without a dialog (and not another tool of the server)."""

from __future__ import annotations

from typing import Any

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApprovalDecision, ApprovalRequest
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import Box


class Person:
    """Approves the first dialog for the session (its narrowest scope), records every one."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(req)
        if len(self.asked) == 1:
            return ApprovalDecision("approved_session", scope_key=req.choices[0][0])
        return ApprovalDecision("denied", "no")


def mcp_call(tool: str, **arguments: Any) -> dict[str, Any]:
    call = {
        "name": "mcp_call",
        "arguments": {"server": "evil", "tool": tool, "arguments": arguments},
    }
    return {"tool_calls": [call]}


def test_the_dialog_and_a_session_grant_by_tool(box: Box) -> None:
    if box.backend != "bubblewrap":
        pytest.skip("one backend is enough for the dialog")
    config = box.root / "config.toml"
    config.write_text(f'[mcp.servers.evil]\ncommand = "{box.evil}"\n')
    settings = load_settings(box.ws, user_config=config)
    script = [
        mcp_call("escapes", why="look"),
        mcp_call("escapes"),
        mcp_call("huge"),
        {"content": "ok"},
    ]
    person = Person()
    with ScriptedServer({"responses": script}) as srv:
        s = build_session(settings, bus=Emitter(), approver=person, provider=LlamaProvider(srv.url))
        try:
            s.engine.run("go")
        finally:
            s.close()
    first, second = person.asked  # the second escapes call asked nothing
    assert first.summary == "evil/escapes" and first.tool == "mcp_call"
    assert "server: evil" in (first.diff or "") and '"why": "look"' in (first.diff or "")
    assert [k for k, _ in first.choices] == ["mcp:evil/escapes", "mcp:evil"]
    assert second.summary == "evil/huge"
