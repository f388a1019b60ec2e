"""A pattern that is text with a stray bracket or operator is searched as that text (the schema
takes any string, and a small model writes `def add(`): an action the schema allows is answered.
What RE2 lacks (a backreference, lookaround) stays a clear error (tests/probes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.tools.base import ToolContext, ToolError, ToolState
from cerveau_tui.tools.search import Search, literal_pattern


def tool_context(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws, state=ToolState())


@pytest.mark.parametrize(
    ("pattern", "line"),
    [
        ("def add(", "def add(a, b):"),
        ("print(x))", "    print(x))"),
        ("arr[1", "v = arr[1"),
        ("*.py", "glob *.py here"),
        ("end\\", "the end\\"),
    ],
)
def test_text_with_a_stray_bracket_is_searched_as_text(
    tmp_path: Path, pattern: str, line: str
) -> None:
    (tmp_path / "m.py").write_text(f"x = 1\n{line}\nz = 3\n")
    (tmp_path / "other.py").write_text("def add_more(): pass\n")
    res = Search().run(Search.Args(pattern=pattern), tool_context(tmp_path))
    assert res.ok
    first, *hits = res.output.splitlines()
    assert first.startswith("[not a regular expression (") and "literal text" in first
    assert hits == [f"m.py:2: {line.strip()}"]


def test_literal_pattern_matches_only_itself() -> None:
    import re

    for text in ["def add(", "a.b*c+d?e|f[g]{h}^$\\", "plain"]:
        rx = re.compile(literal_pattern(text))
        assert rx.fullmatch(text) and not rx.fullmatch(text.replace(".", "x") + "!")


@pytest.mark.parametrize("pattern", [r"(a)\1", "foo(?=bar)", "a++"])
def test_what_re2_lacks_is_still_an_error(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "a.txt").write_text("aa\n")
    with pytest.raises(ToolError, match="invalid regular expression"):
        Search().run(Search.Args(pattern=pattern), tool_context(tmp_path))


@pytest.mark.parametrize("pattern", ["(", "*", "[", ")", "\\"])
def test_a_pattern_of_syntax_alone_is_still_an_error(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "a.txt").write_text("(*[)\\\n")
    with pytest.raises(ToolError, match="invalid regular expression"):
        Search().run(Search.Args(pattern=pattern), tool_context(tmp_path))
