"""The pure parts: the prefix index under its budget, the argument check, the config's trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cerveau_tui.config import ConfigError, McpServerConfig, load_settings
from cerveau_tui.mcp.client import ToolInfo
from cerveau_tui.mcp.hook import mcp_hooks
from cerveau_tui.mcp.index import CHARS_PER_TOKEN, index
from cerveau_tui.mcp.schema import check
from cerveau_tui.mcp.suggest import suggestions


def tools(n: int, desc: str = "Does a thing. And more.") -> list[tuple[str, ToolInfo]]:
    return [("srv", ToolInfo(f"tool_{i}", desc, {})) for i in range(n)]


def test_no_tools_no_index() -> None:
    assert index([], 400) == ""


def test_one_line_per_tool_its_first_sentence() -> None:
    text = index(tools(2), 400)
    assert "- srv/tool_0: Does a thing\n- srv/tool_1: Does a thing" in text
    assert "And more" not in text


def test_the_index_stays_under_its_budget_and_counts_the_rest() -> None:
    text = index(tools(200), 100)
    assert len(text) <= 100 * CHARS_PER_TOKEN + 200  # the last line names what is left out
    assert "more tools of srv" in text


def test_a_description_cannot_put_controls_in_the_prefix() -> None:
    assert "\x1b" not in index(tools(1, "\x1b]52;c;eA==\x07 hi"), 400)


SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 1},
        "mode": {"$ref": "#/$defs/Mode"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    },
    "required": ["n"],
    "additionalProperties": False,
    "$defs": {"Mode": {"enum": ["fast", "slow"]}},
}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({}, "arguments.n: required"),
        ({"n": True}, "arguments.n: expected integer, got boolean"),
        ({"n": 0}, "arguments.n: at least 1"),
        ({"n": 1, "mode": "warp"}, "arguments.mode: must be one of 'fast', 'slow'"),
        ({"n": 1, "tags": ["a", 2]}, "arguments.tags[1]: expected string, got integer"),
        ({"n": 1, "tags": ["a", "b", "c"]}, "arguments.tags: at most 2 items"),
        ({"n": 1, "x": 1}, "arguments.x: not a parameter of this tool"),
    ],
)
def test_arguments_outside_the_schema_are_named(value: dict, problem: str) -> None:
    assert any(p.startswith(problem) for p in check(SCHEMA, value)), check(SCHEMA, value)


def test_arguments_inside_the_schema_pass() -> None:
    assert check(SCHEMA, {"n": 2, "mode": "fast", "tags": ["a"]}) == []


def test_a_servers_pattern_cannot_hang_the_check() -> None:
    # Catastrophic for a backtracking engine; RE2 is linear.
    schema = {"type": "string", "pattern": "^(a+)+$"}
    assert check(schema, "a" * 5000 + "!")


def test_a_self_referencing_schema_ends() -> None:
    schema = {"$ref": "#", "type": "object"}
    assert check(schema, {}) == []


def test_a_server_has_a_command_or_a_url_not_both() -> None:
    with pytest.raises(ValueError):
        McpServerConfig(command="x", url="https://h/mcp")
    with pytest.raises(ValueError):
        McpServerConfig()


def test_a_workspace_configs_server_waits_for_trust(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".cerveau").mkdir(parents=True)
    (ws / ".cerveau" / "config.toml").write_text('[mcp.servers.evil]\ncommand = "./pwn"\n')
    user = tmp_path / "user.toml"
    user.write_text('[mcp.servers.time]\ncommand = "mcp-server-time"\n')
    s = load_settings(ws, user_config=user)
    assert list(s.mcp.servers) == ["time"]
    assert "mcp.servers" in [h["key"] for h in s.workspace_held_back]
    trusted = load_settings(ws, user_config=user, trust_workspace=True)
    assert "evil" in trusted.mcp.servers


def test_a_bad_server_name_names_the_file(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[mcp.servers."a b"]\ncommand = "x"\n')
    with pytest.raises(ConfigError, match="user.toml"):
        load_settings(tmp_path, user_config=user)


def test_a_repositorys_mcp_json_is_said_never_started(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"db": {"command": "npx", "args": ["-y", "db-mcp"]}}})
    )
    said = suggestions(tmp_path, set())
    assert said and "cerveau mcp add db -- npx -y db-mcp" in said[0]
    settings = load_settings(tmp_path, user_config=tmp_path / "none.toml")
    hooks = mcp_hooks(settings, runner=None, deny_read=[])  # type: ignore[arg-type]
    (hook,) = hooks
    assert hook.hub.servers == {} and hook.tools() == []  # type: ignore[attr-defined]


def test_a_linked_mcp_json_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_text(json.dumps({"mcpServers": {"db": {"command": "x"}}}))
    (tmp_path / ".mcp.json").symlink_to(tmp_path / "real.json")
    assert suggestions(tmp_path, set()) == []


def test_a_tool_name_that_could_write_into_the_prefix_is_skipped() -> None:
    from cerveau_tui.mcp.client import _tool

    assert _tool({"name": "ok_name-1.v2", "inputSchema": {}}) is not None
    for bad in ("two\nlines", "x: y", "\x1b[2J", "a" * 129, ""):
        assert _tool({"name": bad}) is None, bad


def test_a_relative_program_is_refused(tmp_path: Path) -> None:
    from cerveau_tui.mcp.launch import LaunchRefused, resolve

    with pytest.raises(LaunchRefused, match="relative path"):
        resolve("./server", tmp_path)
