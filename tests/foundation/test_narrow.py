"""loop/narrow.py: what a round may call, narrowed by refusal (one test per rule)."""

from __future__ import annotations

from cerveau_tui.loop.narrow import DISCUSS_TOOLS, round_refusal


def test_a_free_round_refuses_nothing() -> None:
    assert round_refusal("write_file", discuss=False) is None


def test_discussion_mode_runs_only_the_discuss_tools_and_names_them() -> None:
    said = round_refusal("bash", discuss=True, offered=["read_file", "bash", "commit_plan"])
    assert said is not None and "`bash` does not run" in said
    assert "Only read_file, commit_plan run" in said  # only tools the session has are named
    assert all(round_refusal(t, discuss=True) is None for t in DISCUSS_TOOLS)


def test_a_round_with_only_tools_refuses_the_others_for_that_round() -> None:
    said = round_refusal("edit_file", discuss=False, only=("read_file", "search"))
    assert said is not None and "only read_file, search run this round" in said
    assert round_refusal("search", discuss=False, only=("read_file", "search")) is None


def test_a_withheld_tool_is_refused_and_the_rest_run() -> None:
    said = round_refusal("write_file", discuss=False, withheld={"write_file"})
    assert said is not None and "cut off at the token cap again" in said
    assert round_refusal("read_file", discuss=False, withheld={"write_file"}) is None


def test_discussion_mode_lets_the_model_read_an_mcp_tools_schema_but_not_call_it() -> None:
    assert round_refusal("mcp_describe", discuss=True) is None
    assert "discussion mode" in (round_refusal("mcp_call", discuss=True) or "")
