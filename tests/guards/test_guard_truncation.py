"""Cut-off tool calls vs. wrong ones."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cerveau_tui.loop.guards.truncation import (
    is_truncated_tool_call,
    looks_truncated,
    truncated_call_message,
    wrong_args_message,
)

WRITE = json.dumps(
    {"path": "app.py", "content": 'print("héllo")\n' * 20, "n": [1, 2.5e3, True, None]}
)


@pytest.mark.parametrize("cut", [1, 10, 25, 40, len(WRITE) // 2, len(WRITE) - 1])
def test_a_cut_off_write_looks_truncated(cut: int) -> None:
    assert looks_truncated(WRITE[:cut])


def test_complete_json_is_not_truncated() -> None:
    assert not looks_truncated(WRITE)


@pytest.mark.parametrize(
    "text",
    [
        '{"path": "a.py", "content": "x",, "mode": 1',  # double comma mid-way
        '{"path": "a.py",} trailing',
        "{'path': 'a.py', 'content': 'x",  # single quotes
        "path=a.py content=x",
        '{"path": "a.py" "content": "x"',  # missing comma
        '{"a": tru "',
        '{"a": "\\q"',  # bad escape
    ],
)
def test_wrong_json_is_not_truncated(text: str) -> None:
    assert not looks_truncated(text)


def test_partial_tokens_at_the_end_are_prefixes() -> None:
    for text in [
        '{"a": tr',
        '{"a": -',
        '{"a": 1.',
        '{"a": 1e',
        '{"a": "\\u00',
        '{"a": "x\\',
        "[1, ",
        '{"a"',
    ]:
        assert looks_truncated(text), text


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    value=st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=4), data=st.data()
)
def test_every_proper_prefix_of_an_object_looks_truncated(value: dict, data: st.DataObject) -> None:
    text = json.dumps(value)
    cut = data.draw(st.integers(min_value=1, max_value=len(text) - 1))
    assert looks_truncated(text[:cut])


def test_llama_server_missing_closing_quote_is_truncation() -> None:
    msg = (
        "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at "
        "line 1, column 4096: syntax error while parsing value - invalid string: missing closing quote"
    )
    assert is_truncated_tool_call(msg)


def test_llama_server_unexpected_end_is_truncation() -> None:
    msg = (
        "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error: "
        "syntax error while parsing object - unexpected end of input; expected '}'"
    )
    assert is_truncated_tool_call(msg)


def test_llama_server_invalid_literal_is_not_truncation() -> None:
    msg = (
        "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at "
        "line 1, column 9: syntax error while parsing value - invalid literal; last read: '{'a"
    )
    assert not is_truncated_tool_call(msg)


def test_unspecific_parse_failure_is_truncation_only_at_the_cap() -> None:
    msg = "Failed to parse input at pos 812"
    assert is_truncated_tool_call(msg, finish_reason="length")
    assert not is_truncated_tool_call(msg, finish_reason="stop")


def test_length_with_unterminated_arguments_is_truncation() -> None:
    assert is_truncated_tool_call(
        finish_reason="length", arguments='{"path": "a.py", "content": "def f('
    )
    assert is_truncated_tool_call(finish_reason="length", arguments="")


def test_length_with_complete_arguments_is_not_truncation() -> None:
    assert not is_truncated_tool_call(finish_reason="length", arguments='{"path": "a.py"}')


def test_wrong_arguments_overrule_a_cut_off_looking_message() -> None:
    assert not is_truncated_tool_call(
        "Failed to parse tool call arguments as JSON: unexpected end of input",
        arguments="{'path': 'a.py'",
    )


def test_truncated_message_names_the_cap_and_the_split() -> None:
    msg = truncated_call_message("write_file", 512)
    assert "512 tokens" in msg and "write_file" in msg and "edit_file" in msg and "cut off" in msg


def test_wrong_args_message_lists_the_parameters() -> None:
    schema = {
        "name": "bash",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "timeout": {
                    "anyOf": [{"type": "integer"}, {"type": "null"}],
                    "description": "seconds",
                },
            },
            "required": ["command"],
        },
    }
    msg = wrong_args_message("bash", "Field required: command", schema)
    assert "Field required: command" in msg
    assert "command (string, required)" in msg
    assert "timeout (integer|null, optional: seconds)" in msg
