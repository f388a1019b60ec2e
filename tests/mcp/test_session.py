"""MCP through a whole session (`cerveau run --json`, a scripted model server): the index in the
prefix, the two fixed tools, calls as ordinary tool_call/tool_result events through the policy,
the prefix byte-identical across every request (nothing loaded into it mid-session)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.sandbox.bubblewrap import find_bwrap
from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import server_bin

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="needs bubblewrap")


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@dataclass
class Session:
    events: list[dict[str, Any]]
    requests: list[dict[str, Any]]

    def results(self) -> list[dict[str, Any]]:
        return [e["payload"] for e in self.events if e["type"] == "tool_result"]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e["payload"] for e in self.events if e["type"] == kind]


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """One scripted session (each server start costs seconds): a describe, a call, a call of an
    unmarked tool, a call off the schema."""
    root = Path(tempfile.mkdtemp(prefix="cerveau-mcp-run-", dir="/var/tmp"))
    (root / "ws").mkdir()
    (root / "srv").mkdir()
    (root / "srv" / "evil.py").write_text(Path(__file__).with_name("evil_server.py").read_text())
    config = root / "config.toml"
    config.write_text(
        f'[mcp.servers.time]\ncommand = "{server_bin("mcp-server-time")}"\nread_only = true\n\n'
        f'[mcp.servers.evil]\ncommand = "/usr/bin/python3"\nargs = ["{root}/srv/evil.py"]\n\n'
        '[mcp.servers.broken]\ncommand = "/nonexistent/mcp-server"\n'
    )
    suggestion = {"mcpServers": {"db": {"command": "npx", "args": ["-y", "db-mcp"]}}}
    (root / "ws" / ".mcp.json").write_text(json.dumps(suggestion))
    replies = [
        call("mcp_describe", server="time", tool="get_current_time"),
        call("mcp_call", server="time", tool="get_current_time", arguments={"timezone": "UTC"}),
        call("mcp_call", server="evil", tool="escapes", arguments={}),
        call("mcp_call", server="time", tool="get_current_time", arguments={}),
        {"content": "done."},
    ]
    try:
        with ScriptedServer({"responses": replies}) as srv:
            code, events, err = run_cli(
                root / "ws", srv.url, "what time is it?", env={"CERVEAU_CONFIG": str(config)},
                timeout=180,
            )  # fmt: skip
            requests = list(srv.requests)
        assert code == 0, err
        yield Session(events, requests)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_describe_then_a_call_are_ordinary_tool_events(session: Session) -> None:
    describe, called = session.results()[:2]
    assert [describe["name"], called["name"]] == ["mcp_describe", "mcp_call"]
    assert describe["ok"] and called["ok"], (describe, called)
    assert '"timezone"' in describe["output"] and "required" in describe["output"]
    assert '"timezone": "UTC"' in called["output"]
    assert [c["name"] for c in session.of("tool_call")][:2] == ["mcp_describe", "mcp_call"]


def test_the_index_is_in_the_prefix_and_the_prefix_never_changes(session: Session) -> None:
    system = session.requests[0]["messages"][0]["content"]
    assert "## MCP tools" in system and "- time/get_current_time:" in system
    assert "- evil/escape:" in system
    prefixes = {json.dumps([r["messages"][0], r.get("tools")]) for r in session.requests}
    assert len(session.requests) == 5 and len(prefixes) == 1
    names = [t["function"]["name"] for t in session.requests[0]["tools"]]
    assert "mcp_call" in names and "mcp_describe" in names


def test_an_unmarked_tool_asks_and_headless_denies_it(session: Session) -> None:
    res = session.results()[2]
    assert not res["ok"] and "denied" in res["output"]
    (resolved,) = session.of("approval_resolved")  # asked: nobody is there to say yes
    assert resolved["decision"] == "denied" and resolved["by"] == "headless"


def test_arguments_off_the_schema_are_refused_before_the_server_sees_them(
    session: Session,
) -> None:
    res = session.results()[3]
    assert not res["ok"] and "nothing was sent" in res["output"]
    assert "arguments.timezone: required" in res["output"]


def test_a_server_that_failed_and_a_repositorys_suggestion_are_said(session: Session) -> None:
    said = [n["text"] for n in session.of("notice") if n.get("source") == "mcp"]
    assert any(t.startswith("MCP server broken not available") for t in said), said
    assert any("cerveau mcp add db -- npx -y db-mcp" in t for t in said), said
    system = session.requests[0]["messages"][0]["content"]
    assert "broken/" not in system and "db/" not in system
