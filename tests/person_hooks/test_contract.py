"""The contract's pure parts: one rule per test (person_hooks/contract.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from cerveau_tui.config import HookConfig, HooksConfig
from cerveau_tui.person_hooks.contract import (
    EVENT_MAX_BYTES,
    Matcher,
    argv_of,
    call_paths,
    event_json,
    outcome,
    split_output,
)


def test_a_string_command_is_split_into_words_with_nothing_expanded() -> None:
    assert argv_of("fmt --write '$HOME/a b' `x` $(y)") == [
        "fmt",
        "--write",
        "$HOME/a b",
        "`x`",
        "$(y)",
    ]


def test_a_list_command_is_argv_as_written() -> None:
    assert argv_of(["sh", "-c", "a; b"]) == ["sh", "-c", "a; b"]


def test_an_empty_or_unbalanced_command_is_a_config_error() -> None:
    with pytest.raises(ValidationError):
        HookConfig(command="")
    with pytest.raises(ValidationError):
        HookConfig(command="fmt 'unclosed")


def test_match_is_refused_on_an_event_without_a_tool() -> None:
    with pytest.raises(ValidationError, match="user_prompt"):
        HooksConfig.model_validate({"user_prompt": [{"command": "x", "match": "bash"}]})


@pytest.mark.parametrize(
    ("match", "tool", "path", "expected"),
    [
        ("", "bash", None, True),
        ("bash", "bash", None, True),
        ("bash", "write_file", None, False),
        ("write_file|edit_file", "edit_file", "a.py", True),
        ("write_file(*.py)", "write_file", "src/a.py", True),
        ("write_file(*.py)", "write_file", "a.txt", False),
        ("*(src/**)", "edit_file", "src/x/y.rs", True),
        ("*(src/**)", "bash", None, False),  # a path alternative needs a path
    ],
)
def test_match(match: str, tool: str, path: str | None, expected: bool, tmp_path: Path) -> None:
    args = {"path": path} if path is not None else {}
    assert Matcher.parse(match)(tool, call_paths(tmp_path, args)) is expected


@pytest.mark.parametrize(
    ("event", "code", "expected"),
    [
        ("pre_tool", 0, "ok"),
        ("pre_tool", 2, "blocked"),
        ("turn_end", 2, "blocked"),
        ("session_start", 2, "error"),  # nothing to block there
        ("approval_waiting", 2, "error"),
        ("pre_tool", 1, "error"),
        ("pre_tool", 127, "error"),
    ],
)
def test_exit_codes(event: str, code: int, expected: str) -> None:
    assert outcome(event, code, timed_out=False, interrupted=False) == expected


def test_killed_is_a_timeout_or_the_persons_stop_never_a_block() -> None:
    assert outcome("pre_tool", None, timed_out=True, interrupted=False) == "timeout"
    assert outcome("pre_tool", None, timed_out=False, interrupted=True) == "stopped"


def test_the_last_separator_divides_stdout_from_stderr() -> None:
    sep = "cerveau-hook-abc"
    assert split_output(f"out\n{sep}\nmore\n{sep}\nerr", sep) == (f"out\n{sep}\nmore", "err")
    assert split_output("killed before it", sep) == ("killed before it", "")


def test_the_event_stays_under_its_bound_and_says_what_it_cut() -> None:
    big = "x" * (EVENT_MAX_BYTES * 3)
    text = event_json({"event": "post_tool", "result": {"output": big}, "tool": {"name": "bash"}})
    assert len(text.encode()) <= EVENT_MAX_BYTES
    data = json.loads(text)
    assert data["tool"]["name"] == "bash" and "more bytes cut]" in data["result"]["output"]


def test_the_readme_example_is_a_valid_hooks_config() -> None:
    import re
    import tomllib
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("### Hooks", 1)[1]
    block = re.search(r"```toml\n(.*?)```", section, re.DOTALL)
    assert block is not None
    hooks = HooksConfig.model_validate(tomllib.loads(block.group(1))["hooks"])
    assert [len(hooks.post_tool), len(hooks.pre_tool), len(hooks.approval_waiting)] == [1, 1, 1]
    assert Matcher.parse(hooks.post_tool[0].match)("edit_file", ("a/b.py",))


def test_the_chat_says_nothing_of_a_hook_that_went_on_and_one_line_when_it_blocked() -> None:
    from cerveau_tui.protocol import HookRan
    from cerveau_tui.protocol.describe import describe

    ok = HookRan(name="fmt", event="post_tool", exit=0, ms=12, outcome="ok", tool="write_file")
    assert describe(ok) is None
    no = HookRan(name="no-rm", event="pre_tool", exit=2, ms=9, outcome="blocked", tool="bash",
                 message="use git rm\nsecond line")  # fmt: skip
    assert describe(no) == ("hook no-rm (pre_tool on bash) blocked: use git rm", "warning")
    hung = HookRan(name="slow", event="turn_end", exit=None, ms=1000, outcome="timeout")
    assert describe(hung) == ("hook slow (turn_end) killed at its timeout", "error")


def test_a_lone_surrogate_from_the_model_is_escaped_so_the_launcher_can_take_the_event() -> None:
    text = event_json({"tool": {"arguments": {"path": "a\ud800b"}}})
    text.encode("utf-8")  # raised before: an environment string must encode
    assert json.loads(text)["tool"]["arguments"]["path"] == "a\ud800b"
