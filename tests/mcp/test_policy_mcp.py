"""An MCP call through the policy: judged by server and tool, the person's read-only marking,
a remote server's call a network crossing; the dialog shows server, tool and arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.config import McpServerConfig
from cerveau_tui.mcp.client import ToolInfo
from cerveau_tui.mcp.hub import McpHub
from cerveau_tui.mcp.tools import McpCall
from cerveau_tui.policy import Policy
from cerveau_tui.tools.base import ToolContext, ToolState

TOOL = ToolInfo("commit", "Record changes", {"type": "object"}, {"readOnlyHint": True})


def hub(tmp_path: Path, **servers: McpServerConfig) -> McpHub:
    """A hub whose catalogue is set as start() would have set it (no process needed here)."""
    h = McpHub(servers, tmp_path, lambda extra: None)
    for s in h.servers.values():
        s.tools = [TOOL, ToolInfo("log", "Show history", {"type": "object"})]
    return h


def judge(
    tmp_path: Path,
    h: McpHub,
    args: dict,
    approval: str = "on-request",
    mode: str = "workspace-write",
):  # type: ignore[no-untyped-def]
    policy = Policy(tmp_path, mode, approval, [], network_grant=lambda: False, enforced=True)  # type: ignore[arg-type]
    tool = McpCall(h)
    ctx = ToolContext(workspace=tmp_path, state=ToolState())
    declared = tool.declare(McpCall.Args(**args), ctx)
    return policy, policy.evaluate("mcp_call", declared)


GIT = {"server": "git", "tool": "commit", "arguments": {"message": "x"}}


def test_a_tool_the_server_calls_read_only_still_asks(tmp_path: Path) -> None:
    _, v = judge(tmp_path, hub(tmp_path, git=McpServerConfig(command="/bin/true")), GIT)
    assert v.action == "ask" and "git/commit is not marked read-only" in v.reason


def test_a_tool_the_person_marked_read_only_runs_without_asking(tmp_path: Path) -> None:
    h = hub(tmp_path, git=McpServerConfig(command="/bin/true", read_only=["commit"]))
    assert judge(tmp_path, h, GIT)[1].action == "allow"
    log = {"server": "git", "tool": "log", "arguments": {}}
    assert judge(tmp_path, h, log)[1].action == "ask"  # only the tool named


def test_the_scopes_are_the_tool_then_the_server(tmp_path: Path) -> None:
    _, v = judge(tmp_path, hub(tmp_path, git=McpServerConfig(command="/bin/true")), GIT)
    assert [k for k, _ in v.choices] == ["mcp:git/commit", "mcp:git"]


def test_a_session_grant_of_the_tool_covers_it_and_not_the_servers_other_tools(
    tmp_path: Path,
) -> None:
    h = hub(tmp_path, git=McpServerConfig(command="/bin/true"))
    policy, v = judge(tmp_path, h, GIT)
    policy.grant_session(v)
    tool = McpCall(h)
    ctx = ToolContext(workspace=tmp_path, state=ToolState())
    again = policy.evaluate("mcp_call", tool.declare(McpCall.Args(**GIT), ctx))
    log = policy.evaluate(
        "mcp_call", tool.declare(McpCall.Args(server="git", tool="log", arguments={}), ctx)
    )
    assert again.action == "allow" and again.session
    assert log.action == "ask"


def test_a_remote_servers_call_asks_even_marked_read_only(tmp_path: Path) -> None:
    h = hub(tmp_path, docs=McpServerConfig(url="https://mcp.example.com/mcp", read_only=True))
    _, v = judge(tmp_path, h, {"server": "docs", "tool": "commit", "arguments": {}})
    assert v.action == "ask" and "mcp.example.com, a remote MCP server" in v.reason


def test_approval_never_denies_an_unmarked_tool(tmp_path: Path) -> None:
    h = hub(tmp_path, git=McpServerConfig(command="/bin/true"))
    assert judge(tmp_path, h, GIT, approval="never")[1].action == "deny"


@pytest.mark.parametrize("approval", ["untrusted", "on-request", "on-failure", "never"])
def test_a_marked_tool_runs_under_every_approval(tmp_path: Path, approval: str) -> None:
    h = hub(tmp_path, git=McpServerConfig(command="/bin/true", read_only=True))
    assert judge(tmp_path, h, GIT, approval=approval)[1].action == "allow"


def test_the_dialog_shows_the_server_the_tool_and_the_arguments(tmp_path: Path) -> None:
    tool = McpCall(hub(tmp_path, git=McpServerConfig(command="/bin/true")))
    shown = tool.preview(
        McpCall.Args(server="git", tool="commit", arguments={"message": "fix \x1b[2J"}),
        ToolContext(workspace=tmp_path, state=ToolState()),
    )
    assert shown is not None
    assert "server: git" in shown and "tool: commit" in shown and '"message"' in shown
    assert "\x1b" not in shown


def test_arguments_that_break_the_schema_are_refused_before_sending(tmp_path: Path) -> None:
    from cerveau_tui.tools.base import ToolError

    h = hub(tmp_path, git=McpServerConfig(command="/bin/true"))
    h.servers["git"].tools = [
        ToolInfo(
            "commit",
            "",
            {
                "type": "object",
                "required": ["message"],
                "properties": {"message": {"type": "string"}},
            },
        )
    ]
    with pytest.raises(ToolError, match="nothing was sent.*arguments.message: required"):
        McpCall(h).run(
            McpCall.Args(server="git", tool="commit", arguments={}),
            ToolContext(workspace=tmp_path, state=ToolState()),
        )


def test_a_huge_schema_is_cut_to_the_output_cap(tmp_path: Path) -> None:
    from cerveau_tui.mcp.tools import McpDescribe

    h = hub(tmp_path, git=McpServerConfig(command="/bin/true"))
    huge = {"type": "object", "description": "d" * 500_000}
    h.servers["git"].tools = [ToolInfo("commit", "", huge)]
    ctx = ToolContext(workspace=tmp_path, state=ToolState(), output_cap=2_000)
    out = McpDescribe(h).run(McpDescribe.Args(server="git", tool="commit"), ctx)
    assert len(out.output) < 2_200
