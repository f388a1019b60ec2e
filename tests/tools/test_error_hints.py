"""Every error a file tool writes for the model names the nearest valid action, in a line or two
(issue 37: `read_file test_recipes.py` and `list_files test_recipes.py` twice were each "no such
file" until the repeat guard ended the turn; the session's file list had `tests/test_recipes.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.sandbox.none import NoSandbox
from cerveau_tui.tools.base import NEAREST, ToolContext, ToolError, ToolState, nearest_paths
from cerveau_tui.tools.files import EditFile, ListFiles, ReadFile
from cerveau_tui.tools.search import Search
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

LIBRARY = [
    "more_itertools/__init__.py",
    "more_itertools/recipes.py",
    "more_itertools/more.py",
    "tests/test_recipes.py",
    "tests/test_more.py",
    "docs/conf.py",
    "README.rst",
]


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    for rel in LIBRARY:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(f"# {rel}\n")
    fp = Fingerprinter(tmp_path)
    fp.scan()
    return ToolContext(workspace=tmp_path, state=ToolState(), runner=NoSandbox(), fingerprinter=fp)


def _error(tool: object, ctx: ToolContext, **kw: str) -> str:
    with pytest.raises(ToolError) as err:
        tool.run(tool.Args(**kw), ctx)  # type: ignore[attr-defined]
    return str(err.value)


# --- the nearest paths, pure -------------------------------------------------------------------


def test_the_same_name_in_another_folder_comes_first() -> None:
    assert nearest_paths("test_recipes.py", LIBRARY)[0] == "tests/test_recipes.py"


def test_a_name_misspelt_finds_the_file_by_its_name() -> None:
    assert nearest_paths("tests/test_recipe.py", LIBRARY)[0] == "tests/test_recipes.py"


def test_at_most_a_few_paths_are_named_never_the_tree() -> None:
    tree = [f"pkg{i}/conf.py" for i in range(500)]
    assert len(nearest_paths("conf.py", tree)) == NEAREST


def test_nothing_close_names_nothing() -> None:
    assert nearest_paths("zzz_unrelated.toml", LIBRARY) == []


# --- through the tools -------------------------------------------------------------------------


def test_read_file_of_a_missing_path_names_the_file_of_that_name(ctx: ToolContext) -> None:
    said = _error(ReadFile(), ctx, path="test_recipes.py")
    assert said == "test_recipes.py: no such file; did you mean tests/test_recipes.py?"


def test_list_files_of_a_missing_folder_names_the_nearest_paths(ctx: ToolContext) -> None:
    said = _error(ListFiles(), ctx, path="test_recipes.py")
    assert "no such directory" in said and "tests/test_recipes.py" in said
    assert "more_itertools" in _error(ListFiles(), ctx, path="more_itertool")


def test_search_of_a_missing_path_names_the_nearest_paths(ctx: ToolContext) -> None:
    assert "tests/test_more.py" in _error(Search(), ctx, pattern="x", path="test_more.py")


def test_without_a_fingerprint_the_error_is_as_before(tmp_path: Path) -> None:
    bare = ToolContext(workspace=tmp_path, state=ToolState(), runner=NoSandbox())
    assert _error(ReadFile(), bare, path="nope.py") == "nope.py: no such file"


def test_edit_file_names_the_closest_lines_with_their_numbers(ctx: ToolContext) -> None:
    path = Path(ctx.workspace) / "more_itertools/recipes.py"
    path.write_text("import x\n\n\ndef tail(n, iterable):\n    return deque(iterable, maxlen=n)\n")
    said = _error(EditFile(), ctx, path=str(path), old="def tail(n, iterabel):\n    pass", new="")
    assert "Closest line: 'def tail(n, iterable):' (line 4)" in said
    assert said.count("\n") == 0


def test_edit_file_whose_lines_all_exist_says_where_they_start(ctx: ToolContext) -> None:
    path = Path(ctx.workspace) / "more_itertools/more.py"
    path.write_text("a = 1\n\ndef f():\n    return 1\n")
    said = _error(EditFile(), ctx, path=str(path), old="def f():\nreturn 1", new="")
    assert "starts at line 3" in said
