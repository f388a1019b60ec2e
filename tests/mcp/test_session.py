"""MCP through a whole session (`cerveau run --json`, a scripted model server): the index in the
prefix, the two fixed tools, calls as ordinary tool_call/tool_result events through the policy,
the prefix byte-identical across every request (nothing loaded into it mid-session)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
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


@pytest.fixture
def root() -> Iterator[Path]:
    r = Path(tempfile.mkdtemp(prefix="cerveau-mcp-run-", dir="/var/tmp"))
    (r / "ws").mkdir()
    yield r
    shutil.rmtree(r, ignore_errors=True)


def run(root: Path, *replies: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    config = root / "config.toml"
    evil = Path(__file__).with_name("evil_server.py")
    config.write_text(
        f'[mcp.servers.time]\ncommand = "{server_bin("mcp-server-time")}"\nread_only = true\n\n'
        f'[mcp.servers.evil]\ncommand = "/usr/bin/python3"\nargs = ["{root}/srv/evil.py"]\n'
    )
    (root / "srv").mkdir(exist_ok=True)
    (root / "srv" / "evil.py").write_text(evil.read_text())
    with ScriptedServer({"responses": [*replies, {"content": "done."}]}) as srv:
        code, events, err = run_cli(
            root / "ws", srv.url, "what time is it?", env={"CERVEAU_CONFIG": str(config)},
            timeout=180,
        )  # fmt: skip
        requests = list(srv.requests)
    assert code == 0, err
    return events, requests


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in events if e["type"] == kind]


def test_a_describe_then_a_call_are_ordinary_tool_events(root: Path) -> None:
    events, requests = run(
        root,
        call("mcp_describe", server="time", tool="get_current_time"),
        call("mcp_call", server="time", tool="get_current_time", arguments={"timezone": "UTC"}),
    )
    results = of(events, "tool_result")
    assert [r["name"] for r in results] == ["mcp_describe", "mcp_call"]
    assert all(r["ok"] for r in results), results
    assert '"timezone"' in results[0]["output"] and "required" in results[0]["output"]
    assert '"timezone": "UTC"' in results[1]["output"]
    assert [c["name"] for c in of(events, "tool_call")] == ["mcp_describe", "mcp_call"]
    system = requests[0]["messages"][0]["content"]
    assert "## MCP tools" in system and "- time/get_current_time:" in system
    assert "- evil/escape:" in system
    # The prefix (system message and tool list) is the same bytes in every request.
    prefixes = {json.dumps([r["messages"][0], r.get("tools")]) for r in requests}
    assert len(prefixes) == 1
    names = [t["function"]["name"] for t in requests[0]["tools"]]
    assert "mcp_call" in names and "mcp_describe" in names


def test_an_unmarked_tool_asks_and_headless_denies_it(root: Path) -> None:
    events, _ = run(root, call("mcp_call", server="evil", tool="escapes", arguments={}))
    (res,) = of(events, "tool_result")
    assert not res["ok"] and "denied" in res["output"]
    (resolved,) = of(events, "approval_resolved")  # asked: nobody is there to say yes
    assert resolved["decision"] == "denied" and resolved["by"] == "headless"


def test_arguments_off_the_schema_are_refused_before_the_server_sees_them(root: Path) -> None:
    events, _ = run(root, call("mcp_call", server="time", tool="get_current_time", arguments={}))
    (res,) = of(events, "tool_result")
    assert not res["ok"] and "nothing was sent" in res["output"]
    assert "arguments.timezone: required" in res["output"]
