"""Tool calls printed as text, and hallucinated tool names."""

from __future__ import annotations

import pytest

from cerveau_tui.loop.guards.text_calls import (
    extract_text_tool_calls,
    how_to_call_tools_message,
    unknown_tool_message,
)

TOOLS = ["bash", "read_file", "write_file", "edit_file", "list_files", "search"]


@pytest.mark.parametrize(
    "content",
    [
        'I will list it: {"name": "bash", "arguments": {"command": "ls"}}',
        '{"tool": "bash", "args": {"command": "ls"}}',
        '{"tool": "bash", "parameters": {"command": "ls"}}',
        '{"tool_call": {"name": "bash", "arguments": {"command": "ls"}}}',
        '{"function": {"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}}',
        '{"type": "function", "function": {"name": "bash", "arguments": {"command": "ls"}}}',
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}',  # closing tag dropped
        "<tool_call>{'name': 'bash', 'arguments': {'command': 'ls'}}</tool_call>",  # Python quotes
        'Let me run:\n```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```\n',
        '<function=bash>{"command": "ls"}</function>',
    ],
)
def test_a_printed_call_is_recognised(content: str) -> None:
    calls = extract_text_tool_calls(content, TOOLS)
    assert len(calls) == 1
    assert calls[0].name == "bash"
    assert calls[0].arguments == {"command": "ls"}
    assert calls[0].known


def test_plain_prose_has_no_calls() -> None:
    assert extract_text_tool_calls("The file has {braces} in it; done.", TOOLS) == []


def test_data_json_is_not_a_call() -> None:
    content = 'Your package.json should be {"name": "myapp", "version": "1.0.0"}.'
    assert extract_text_tool_calls(content, TOOLS) == []


def test_an_unknown_name_is_flagged_not_known() -> None:
    calls = extract_text_tool_calls('{"name": "run_shell", "arguments": {"cmd": "ls"}}', TOOLS)
    assert [(c.name, c.known) for c in calls] == [("run_shell", False)]


def test_several_calls_come_back_in_order() -> None:
    content = (
        '{"name": "read_file", "arguments": {"path": "a.py"}}\n'
        '{"name": "write_file", "arguments": {"path": "b.py", "content": "x"}}'
    )
    assert [c.name for c in extract_text_tool_calls(content, TOOLS)] == ["read_file", "write_file"]


def test_a_cut_off_printed_call_is_not_run() -> None:
    assert (
        extract_text_tool_calls('<tool_call>{"name": "bash", "arguments": {"command": "l', TOOLS)
        == []
    )


def test_how_to_message_lists_the_tools() -> None:
    msg = how_to_call_tools_message(TOOLS)
    assert "read_file" in msg and "never executed" in msg


def test_unknown_tool_message_offers_the_closest_name() -> None:
    msg = unknown_tool_message("readfile", TOOLS)
    assert "`read_file`" in msg and "no tool named `readfile`" in msg
    assert "list_files" in msg


def test_unknown_tool_message_matches_by_words() -> None:
    assert "Did you mean `list_files`" in unknown_tool_message("list_directory_files", TOOLS)


def test_hostile_text_is_not_a_call_and_does_not_crash_or_hang() -> None:
    # Issue 10: nested 100k deep ended the turn as "internal error: RecursionError"; repeated
    # `<tool_call>{` made the scan quadratic after the stream, where no deadline applies.
    from cerveau_tui.loop.guards.text_calls import extract_text_tool_calls

    deep = (
        'here: {"name": "read_file", "arguments": {"path": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    )
    assert extract_text_tool_calls(deep, ["read_file"]) == []
    assert extract_text_tool_calls("<tool_call>{" * 50_000, ["read_file"]) == []
    assert extract_text_tool_calls("x" * 10 + "{" * 20_000, ["read_file"]) == []
