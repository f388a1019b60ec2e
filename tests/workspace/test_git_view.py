"""git_view and the workspace guard built on it: git's own answer, asked as few times as the rules
allow, and never taken for "clean" when it could not be asked."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cerveau_tui.testing.git_probe import existing_repo, file_tool
from cerveau_tui.workspace.git.change import ChangeGuard, guard_for
from cerveau_tui.workspace.git.view import chain, compare, run_git, view


class Counting:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, args: list[str], cwd: str) -> tuple[int, bytes, bytes]:
        self.calls.append(args[0])
        return run_git(args, cwd)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    existing_repo(ws, home=tmp_path / "home", ceiling=tmp_path)
    return Path(os.path.realpath(ws))


def test_a_deep_folder_in_one_repository_costs_one_rev_parse(ws: Path) -> None:
    deep = ws / "a" / "b" / "c"
    deep.mkdir(parents=True)
    run = Counting()
    v = view(chain(str(ws), [str(deep / "x.py")]), run=run)
    assert run.calls.count("rev-parse") == 1
    assert set(v.found.values()) == {str(ws / ".git")} and len(v.found) == 4


def test_a_nested_repository_and_its_parent_are_each_asked_once(ws: Path, tmp_path: Path) -> None:
    existing_repo(ws / "vendor" / "lib", home=tmp_path / "home", ceiling=tmp_path)
    run = Counting()
    v = view(chain(str(ws), [str(ws / "vendor" / "lib" / "x.py")]), run=run)
    assert run.calls.count("rev-parse") == 2
    assert v.found[str(ws / "vendor")] == str(ws / ".git")
    assert v.found[str(ws / "vendor" / "lib")] == str(ws / "vendor" / "lib" / ".git")


def test_the_config_listing_is_reused_until_a_file_it_read_changes(ws: Path) -> None:
    run = Counting()
    view([str(ws)], run=run)
    view([str(ws)], run=run)
    assert run.calls.count("config") == 1
    with open(ws / ".git" / "config", "a") as f:
        f.write("[user]\n\tname = someone\n")
    view([str(ws)], run=run)
    assert run.calls.count("config") == 2


def test_a_hook_made_executable_is_a_difference(ws: Path) -> None:
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o644)
    before = view([str(ws)])
    hook.chmod(0o755)
    diffs = compare(before, view([str(ws)]), str(ws))
    assert [(d.kind, d.what) for d in diffs] == [("hook", "hook pre-commit")]
    assert "made executable" in diffs[0].detail


def test_a_new_hook_that_is_not_executable_is_no_difference(ws: Path) -> None:
    before = view([str(ws)])
    (ws / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(ws / ".git" / "hooks" / "pre-commit", 0o644)
    assert compare(before, view([str(ws)]), str(ws)) == []


def test_a_setting_from_outside_the_workspace_is_the_persons(ws: Path, tmp_path: Path) -> None:
    # A new repository inherits the person's global config: not the model's.
    outside = tmp_path / "global.gitconfig"
    outside.write_text("[core]\n\tpager = less\n")
    before = view([str(ws)])
    # The model's include of a file outside: the include is flagged, what it reads is not.
    subprocess.run(["git", "-C", str(ws), "config", "include.path", str(outside)], check=True)
    after = view([str(ws)])
    kinds = {(d.what, d.path) for d in compare(before, after, str(ws))}
    assert ("include.path", str(ws / ".git" / "config")) in kinds
    assert all(path != str(outside) for _, path in kinds)


def test_a_guard_that_cannot_run_git_says_the_write_is_unchecked(ws: Path) -> None:
    guard = ChangeGuard(ws, run=lambda args, cwd: (127, b"", b"no git"))
    target = ws / "x.py"
    _, verdict = guard.change([str(target)], lambda: target.write_text("x = 1\n"))
    assert not verdict and "NOT checked" in verdict.unchecked


def test_the_file_tool_tells_the_model_when_nothing_was_checked(ws: Path) -> None:
    guard = guard_for(ws)
    guard.run = lambda args, cwd: (127, b"", b"no git")
    try:
        out = file_tool(ws, "write_file", path="x.py", content="x = 1\n")
    finally:
        guard.run = run_git
    assert out.ok and "NOT checked" in out.output
