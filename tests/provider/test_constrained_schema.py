"""The constrained action schema carries the tools' argument constraints, in the dialect
llama-server's grammar converter reads (issue 24: `bash {"command": ""}` passed the schema, then
failed as "command is empty" three rounds running)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cerveau_tui.provider.constrained import action_schema
from cerveau_tui.provider.grammar_dialect import GRAMMAR_NOT_BLANK, GRAMMAR_PATH, grammar_schema
from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.tools.args import NOT_BLANK, PATH
from cerveau_tui.tools.plan_tools import PLAN_TOOLS
from cerveau_tui.tools.registry import default_tools


def _tool_args(schema: dict[str, Any], name: str) -> dict[str, Any]:
    for option in schema["oneOf"]:
        if option["properties"].get("tool", {}).get("const") == name:
            args: dict[str, Any] = option["properties"]["arguments"]
            return args
    raise AssertionError(f"{name} not offered")


def _all_patterns(node: Any) -> list[str]:
    if isinstance(node, list):
        return [p for x in node for p in _all_patterns(x)]
    if not isinstance(node, dict):
        return []
    own = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
    return own + [p for v in node.values() for p in _all_patterns(v)]


def test_the_run_cli_sends_bash_command_with_a_min_length_in_the_response_format(
    tmp_path: Path,
) -> None:
    with ScriptedServer({"responses": [{"content": "hi"}]}, supports_tools=False) as srv:
        run_cli(tmp_path, srv.url, "say hi", "--action-mode", "constrained")
        body = srv.requests[0]
    schema = body["response_format"]["json_schema"]["schema"]
    command = _tool_args(schema, "bash")["properties"]["command"]
    assert command["minLength"] >= 1
    assert command["pattern"] == GRAMMAR_NOT_BLANK


def test_every_pattern_sent_to_the_grammar_is_anchored_so_the_converter_keeps_it() -> None:
    """An unanchored pattern is dropped by the converter with a warning, and minLength with it."""
    tools = [t.schema() for t in [*default_tools(), *(c() for c in PLAN_TOOLS)]]
    patterns = _all_patterns(action_schema(tools))
    assert patterns
    assert all(p.startswith("^") and p.endswith("$") for p in patterns), patterns
    assert not any("\\s" in p or "\\S" in p for p in patterns), patterns  # no such escape there


def test_the_grammar_pattern_refuses_the_json_text_of_every_blank_string() -> None:
    """It is matched against the JSON text between the quotes, escapes and all."""
    rx = re.compile(GRAMMAR_NOT_BLANK)
    for blank in ["", " ", "\t", "\n", "\r\n", "\u00a0", "\u3000", " x"]:
        for text in (json.dumps(blank), json.dumps(blank, ensure_ascii=False)):
            assert not rx.match(text[1:-1]), repr(blank)


def test_the_grammar_pattern_accepts_the_json_text_of_real_commands() -> None:
    rx = re.compile(GRAMMAR_NOT_BLANK)
    for value in ["ls", 'echo "hi" > x', "a\nb", "\\ls", "pytest -q\t", "é", "/tmp/x"]:
        assert rx.match(json.dumps(value, ensure_ascii=False)[1:-1]), repr(value)
        assert re.search(NOT_BLANK, value)  # and the tool's own rule agrees


def test_grammar_schema_rewrites_only_the_not_blank_pattern() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "minLength": 1, "pattern": NOT_BLANK},
            "b": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
            "c": {"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 2},
        },
    }
    out = grammar_schema(schema)
    assert out["properties"]["a"] == {
        "type": "string",
        "minLength": 1,
        "pattern": GRAMMAR_NOT_BLANK,
    }
    assert out["properties"]["b"] == schema["properties"]["b"]
    assert out["properties"]["c"] == schema["properties"]["c"]
    assert schema["properties"]["a"]["pattern"] == NOT_BLANK  # not mutated


def test_a_bound_on_a_not_blank_field_goes_into_its_grammar_pattern() -> None:
    """The converter lets a pattern win over maxLength: a narrowed command keeps its bound."""
    out = grammar_schema({"type": "string", "minLength": 1, "maxLength": 5, "pattern": NOT_BLANK})
    rx = re.compile(out["pattern"])
    assert rx.match("abcde") and not rx.match("abcdef") and not rx.match(" ab")
    assert rx.match('\\"abcd')  # an escape is one character of the five


def test_the_grammar_path_pattern_refuses_a_nul_and_a_blank_and_accepts_real_paths() -> None:
    rx = re.compile(GRAMMAR_PATH)
    for bad in ["a\x00b", "\x00", " ", "", " a.py"]:
        assert not rx.match(json.dumps(bad)[1:-1]), repr(bad)
    for good in ["a.py", "src/é.py", "dir with space/x", "../up", "a\u1000"]:
        assert rx.match(json.dumps(good)[1:-1]) and re.search(PATH, good), repr(good)
    assert grammar_schema({"type": "string", "pattern": PATH})["pattern"] == GRAMMAR_PATH
