"""Constrained action mode: schema building, reply conversion, history rewrite (pure)."""

from __future__ import annotations

import itertools
import json

from cerveau_tui.provider.constrained import (
    ACTION_INSTRUCTION,
    AnswerStream,
    action_schema,
    parse_action,
    rewrite_history,
)

READ = {
    "name": "read_file",
    "description": "Read a file",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
BASH = {
    "name": "bash",
    "description": "Run",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
        "required": ["command"],
    },
}


def ids():
    counter = itertools.count(1)
    return lambda: f"call_{next(counter)}"


def test_schema_is_one_of_each_tool_call_plus_an_answer() -> None:
    schema = action_schema([READ, BASH])
    options = schema["oneOf"]
    assert [o["properties"].get("tool", {}).get("const") for o in options] == [
        "read_file",
        "bash",
        None,
    ]
    assert options[0]["properties"]["arguments"] == READ["parameters"]
    assert all(o["required"] == ["tool", "arguments"] for o in options[:2])
    assert options[2] == {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }


def test_schema_moves_each_tools_defs_to_the_root_so_refs_resolve() -> None:
    tool = {
        "name": "plan",
        "parameters": {
            "title": "PlanArgs",
            "type": "object",
            "$defs": {"Step": {"type": "string"}},
            "properties": {"steps": {"type": "array", "items": {"$ref": "#/$defs/Step"}}},
        },
    }
    schema = action_schema([tool])
    assert schema["$defs"] == {"Step": {"type": "string"}}
    args = schema["oneOf"][0]["properties"]["arguments"]
    assert "$defs" not in args and "title" not in args
    assert "$defs" in tool["parameters"]  # the registry's schema is not mutated


def test_a_tool_action_becomes_a_tool_call_with_json_arguments() -> None:
    content, calls = parse_action(
        '{"tool": "bash", "arguments": {"command": "echo hello"}}', "stop", ids()
    )
    assert content == ""
    assert [(c.id, c.name, c.parsed()) for c in calls] == [
        ("call_1", "bash", {"command": "echo hello"})
    ]


def test_an_answer_action_becomes_content() -> None:
    assert parse_action('{\n  "answer": "All done."\n}', "stop", ids()) == ("All done.", [])


def test_a_call_cut_at_the_cap_keeps_its_raw_arguments_for_the_truncation_guard() -> None:
    content, calls = parse_action(
        '{"tool": "write_file", "arguments": {"path": "a.py", "content": "def f(', "length", ids()
    )
    assert content == ""
    assert calls[0].name == "write_file"
    assert calls[0].arguments == '{"path": "a.py", "content": "def f('


def test_an_answer_cut_at_the_cap_keeps_what_was_said() -> None:
    assert parse_action('{"answer": "The file has three fun', "length", ids()) == (
        "The file has three fun",
        [],
    )


def test_text_from_a_server_that_ignored_the_schema_is_a_plain_answer() -> None:
    assert parse_action("Sure! Here you go.", "stop", ids()) == ("Sure! Here you go.", [])


def test_a_fenced_action_is_still_read() -> None:
    _, calls = parse_action(
        '```json\n{"tool": "read_file", "arguments": {"path": "x"}}\n```', "stop", ids()
    )
    assert calls[0].name == "read_file"


HISTORY = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Show x.py"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "x.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "print(1)\n"},
    {"role": "assistant", "content": "It prints 1."},
]


def test_history_rewrite_uses_only_roles_the_template_knows() -> None:
    out = rewrite_history(HISTORY)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant"]
    assert json.loads(out[2]["content"]) == {"tool": "read_file", "arguments": {"path": "x.py"}}
    assert out[3]["content"] == "Result of read_file:\nprint(1)\n"
    assert json.loads(out[4]["content"]) == {"answer": "It prints 1."}


def test_history_rewrite_states_the_format_once_in_the_system_message() -> None:
    out = rewrite_history(HISTORY + [{"role": "system", "content": "later note"}])
    assert out[0]["content"] == f"You are a coding agent.\n\n{ACTION_INSTRUCTION}"
    assert out[-1]["content"] == "later note"


def test_history_without_a_system_message_gets_one_with_the_format() -> None:
    out = rewrite_history([{"role": "user", "content": "hi"}])
    assert out[0] == {"role": "system", "content": ACTION_INSTRUCTION}


def test_history_rewrite_is_byte_stable_so_the_prompt_cache_is_reused() -> None:
    assert json.dumps(rewrite_history(HISTORY)) == json.dumps(rewrite_history(list(HISTORY)))
    # and the rewrite of a longer history starts with the rewrite of the shorter one
    assert rewrite_history(HISTORY)[:4] == rewrite_history(HISTORY[:4])


def test_answer_stream_shows_the_answer_as_it_arrives_escapes_included() -> None:
    stream = AnswerStream()
    text = json.dumps({"answer": 'line one\nsaid "hi" \u00e9'})
    shown = "".join(stream.feed(text[i : i + 2]) for i in range(0, len(text), 2))
    assert shown == 'line one\nsaid "hi" \u00e9'


def test_answer_stream_shows_nothing_of_a_tool_action() -> None:
    stream = AnswerStream()
    text = '{"tool": "bash", "arguments": {"command": "ls"}}'
    assert "".join(stream.feed(ch) for ch in text) == ""


def test_an_action_kept_verbatim_is_replayed_byte_for_byte() -> None:
    from cerveau_tui.provider.constrained import rewrite_history

    raw = '{ "tool":"bash",  "arguments": {"command": "ls"} }'
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
    }
    msgs = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": raw, "tool_calls": [call]},
    ]
    assert rewrite_history(msgs)[-1]["content"] == raw
    other = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "prose", "tool_calls": [call]},
    ]
    assert (
        rewrite_history(other)[-1]["content"] == '{"tool": "bash", "arguments": {"command": "ls"}}'
    )
