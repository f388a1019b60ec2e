"""git_stall: a file where git reads its metadata that would make git (the guard's, then the
person's) wait forever is refused by kind, before git is asked; a change that makes one is
reported; and the rest of the change is still checked (the guard does not go blind)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cerveau_tui.testing.git_probe import existing_repo, make_marker
from cerveau_tui.workspace.git.change import ChangeGuard
from cerveau_tui.workspace.git.guard import check, snapshot
from cerveau_tui.workspace.git.quarantine import neutralize
from cerveau_tui.workspace.git.snapshot import default_parser
from cerveau_tui.workspace.git.stall import blocker
from cerveau_tui.workspace.git.view import compare, run_git, view


class Counting:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, args: list[str], cwd: str) -> tuple[int, bytes, bytes]:
        self.calls.append((args[0], cwd))
        return run_git(args, cwd)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    existing_repo(ws, home=tmp_path / "home", ceiling=tmp_path)
    return Path(os.path.realpath(ws))


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def test_a_fifo_head_is_refused_without_asking_git(ws: Path) -> None:
    _fifo(ws / ".git" / "HEAD")
    run = Counting()
    v = view([str(ws)], run=run)
    assert run.calls == [] and v.stalled == {str(ws / ".git"): str(ws / ".git" / "HEAD")}
    assert not v.unavailable  # git CAN run: this repository is one it would hang in


def test_a_fifo_made_by_a_change_is_a_difference(ws: Path) -> None:
    before = view([str(ws)])
    _fifo(ws / ".git" / "HEAD")
    diffs = compare(before, view([str(ws)]), str(ws))
    assert [(d.kind, d.path) for d in diffs] == [("repository", str(ws / ".git" / "HEAD"))]
    assert "named pipe" in diffs[0].detail


def test_an_include_naming_a_fifo_is_refused(ws: Path) -> None:
    os.mkfifo(ws / "inc.cfg")
    with open(ws / ".git" / "config", "a") as f:
        f.write("[include]\n\tpath = ../inc.cfg\n")
    assert blocker(str(ws), default_parser) == (str(ws / ".git"), str(ws / "inc.cfg"))


def test_an_include_of_an_include_naming_a_fifo_is_refused(ws: Path) -> None:
    os.mkfifo(ws / "deep.cfg")
    (ws / "one.cfg").write_text('[includeIf "onbranch:x"]\n\tpath = deep.cfg\n')
    with open(ws / ".git" / "config", "a") as f:
        f.write("[include]\n\tpath = ../one.cfg\n")
    assert blocker(str(ws), default_parser) == (str(ws / ".git"), str(ws / "deep.cfg"))


@pytest.mark.skipif(not os.path.exists("/proc/kmsg"), reason="no /proc/kmsg here")
def test_a_head_linked_into_proc_is_refused(ws: Path) -> None:
    (ws / ".git" / "HEAD").unlink()
    (ws / ".git" / "HEAD").symlink_to("/proc/kmsg")
    assert blocker(str(ws), default_parser) == (str(ws / ".git"), str(ws / ".git" / "HEAD"))


def test_a_gitfile_to_a_folder_with_a_fifo_head_is_refused(ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.git"
    other.mkdir()
    os.mkfifo(other / "HEAD")
    sub = ws / "sub"
    sub.mkdir()
    (sub / ".git").write_text(f"gitdir: {other}\n")
    assert blocker(str(sub), default_parser) == (os.path.realpath(other), str(other / "HEAD"))


def test_a_dotgit_that_is_a_fifo_is_refused(ws: Path) -> None:
    sub = ws / "sub"
    sub.mkdir()
    os.mkfifo(sub / ".git")
    assert blocker(str(sub), default_parser) == (str(sub / ".git"), str(sub / ".git"))


def test_a_stalled_parent_does_not_blind_the_guard_to_a_planted_nested_hook(
    ws: Path, tmp_path: Path
) -> None:
    """Before: a FIFO HEAD at the root made every view 'git could not be run' and the guard said
    NOT checked for the whole change, a nested repository's new hook included."""
    nested = ws / "vendor" / "lib"
    existing_repo(nested, home=tmp_path / "home", ceiling=tmp_path)
    _fifo(ws / ".git" / "HEAD")
    marker = make_marker(tmp_path / "probe")
    hook = nested / ".git" / "hooks" / "pre-commit"
    guard = ChangeGuard(ws)

    def plant() -> None:
        hook.write_text(f"#!/bin/sh\n{marker.program}\n")
        hook.chmod(0o755)

    _, verdict = guard.change([str(hook)], plant)
    assert not verdict.unchecked and not hook.exists()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "GIT_CEILING_DIRECTORIES": str(tmp_path),
    }
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "x"], cwd=nested, env=env, timeout=20
    )
    assert not marker.fired()


COMMANDS = {
    "head": "rm .git/HEAD && mkfifo .git/HEAD",
    "branch ref": "rm -f .git/refs/heads/main .git/refs/heads/master && mkfifo .git/refs/heads/main && mkfifo .git/refs/heads/master",
    "index": "rm -f .git/index && mkfifo .git/index",
    "head into proc": "rm .git/HEAD && ln -s /proc/kmsg .git/HEAD",
    "nested dotgit": "mkdir sub && mkfifo sub/.git",
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_command_that_would_stall_the_persons_git_is_undone(
    ws: Path, tmp_path: Path, command: str
) -> None:
    """The command runs (here as a host process); after the guard the person's own `git status`
    in every folder returns (a hang fails the test at the timeout)."""
    before = snapshot(ws)
    subprocess.run(["sh", "-c", command], cwd=ws, check=True)
    findings = check(ws, before)
    actions = neutralize(ws, findings)
    assert findings and all("NOT undone" not in a for a in actions)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "GIT_CEILING_DIRECTORIES": str(tmp_path),
    }
    for cwd in (ws, *(p for p in [ws / "sub"] if p.is_dir())):
        subprocess.run(
            ["git", "status", "--short"], cwd=cwd, env=env, timeout=20, capture_output=True
        )


def test_a_fifo_the_person_already_had_is_not_reported(ws: Path) -> None:
    os.mkfifo(ws / ".git" / "my-pipe")
    before = snapshot(ws)
    subprocess.run(["sh", "-c", "echo x > notes.txt"], cwd=ws, check=True)
    assert check(ws, before) == []
