"""One guard for every change the harness makes to the workspace itself: the file tools' writes,
undo, the polish rollback. Commands go through the same guard's lock and index (GuardedRunner,
which walks the whole tree because a command's writes are not declared).

Probed: the git guard bracketed commands only, so `write_file` alone could plant what the
person's next `git status` runs (view.py names the ways), and the next command's guard then
took the planted state for the person's. Here every change is bracketed instead: git's view
(view.py) of the folders the change touches, their parents up to the workspace, and any
repository whose control files it touches (config, include targets, hooks folder, git dir, from
`known`: the last full snapshot), before and after. A difference is a finding: the change is
undone (each path back to its bytes and mode from before, its version moved into the quarantine
by quarantine.py, folders it created removed), git's view is taken again to confirm, and the
finding goes to `on_findings` (the person) and into the verdict (the model). O(folders touched),
no walk, except one full snapshot the first time a workspace is guarded.

One guard per workspace per process (`guard_for`): the lock that keeps two checks from undoing
the same file at once, and the index, must be the same for the file tools, undo and commands.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from ..io.beneath import UnsafePath, open_dir_beneath
from .config_rules import ParseConfig, danger, split_key
from .guard import Finding
from .quarantine import neutralize
from .snapshot import (
    MISSING,
    Control,
    GitState,
    default_parser,
    read_control,
    rel_to,
    snapshot,
)
from .view import Difference, RunGit, View, chain, compare, run_git, view

T = TypeVar("T")
OnFindings = Callable[[list[Finding]], None]
# A file the change replaces must come back whole if the change is undone (the snapshot's
# KEEP_BYTES is for control files; this is the person's work).
_KEEP_PREVIOUS = 64 * 1024 * 1024


@dataclass
class Verdict:
    findings: list[Finding] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    unchecked: str = ""  # why git's view could not be taken (then nothing was checked)

    def __bool__(self) -> bool:
        return bool(self.findings)

    def note(self, workspace: str | Path, what: str = "this write") -> str:
        """What the model reads: what it left, and what was done about it."""
        seen = list(dict.fromkeys(f.describe(workspace) for f in self.findings))
        failed = any(a.startswith("NOT undone") for a in self.actions)
        verb = "it was only partly undone" if failed else "it was undone"
        return (
            f"[harness] {what} left code for the person's next git command "
            f"({'; '.join(seen)}); {verb}: {'; '.join(self.actions) or 'nothing could be done'}."
            " Do not create repositories, set programs in git config or add git hooks."
        )


class ChangeGuard:
    def __init__(
        self,
        workspace: str | Path,
        *,
        run: RunGit = run_git,
        quarantine_dir: Path | None = None,
    ) -> None:
        self.workspace = os.path.realpath(workspace)
        self.run = run
        self.quarantine_dir = quarantine_dir
        self.lock = threading.RLock()
        self.on_findings: OnFindings | None = None
        #: The last full snapshot (GuardedRunner refreshes it after every command): which
        #: repositories read a file outside the changed folders' chain.
        self.known: GitState | None = None

    def change(self, paths: Iterable[str | Path], apply: Callable[[], T]) -> tuple[T, Verdict]:
        """Run `apply`, which changes exactly `paths` (files), and undo it if git's view moved.
        If `apply` raises, what it managed to change is still checked, then the error goes on."""
        targets = [os.path.normpath(os.path.join(self.workspace, p)) for p in paths]
        targets = [p for p in targets if _inside(self.workspace, p)]
        with self.lock:
            if not targets:
                return apply(), Verdict()
            folders = chain(self.workspace, targets) + self._watchers(targets)
            saved = {p: read_control(p, keep=_KEEP_PREVIOUS) for p in targets}
            existed = {d for d in folders if os.path.lexists(d)}
            before = view(folders, run=self.run)
            try:
                result = apply()
            finally:
                verdict = self._check(folders, before, saved, existed)
                if verdict and self.on_findings is not None:
                    self.on_findings(verdict.findings)
        return result, verdict

    def _watchers(self, targets: list[str]) -> list[str]:
        """Where git finds each known repository whose config, include, hooks folder or git dir
        holds a target: a nested repository can include a file at the root."""
        if self.known is None:
            self.known = snapshot(self.workspace)
        out: list[str] = []
        for repo in self.known.repos.values():
            if repo.git_dir is None:
                continue
            dirs = [repo.git_dir, repo.common_dir or repo.git_dir]
            if repo.hooks_dir:
                dirs.append(os.path.realpath(repo.hooks_dir))
            if any(t in repo.configs or _under_any(t, dirs) for t in targets):
                start = repo.entry if repo.kind == "bare" else os.path.dirname(repo.entry)
                out.append(os.path.join(self.workspace, start) if start else self.workspace)
        return [d for d in dict.fromkeys(out) if d not in targets]

    def _check(
        self, folders: list[str], before: View, saved: dict[str, Control], existed: set[str]
    ) -> Verdict:
        after = view(folders, run=self.run)
        if before.unavailable or after.unavailable:
            # Never "clean": the person's git may be one the guard cannot run.
            why = "git could not be run; what this change means for the next git is NOT checked"
            return Verdict(unchecked=f"[harness] {why}")
        diffs = compare(before, after, self.workspace)
        if not diffs:
            return Verdict()
        findings = [self._finding(d) for d in diffs]
        undo = [
            Finding("undo", "", "file", False, p, "undo", "write", c if c.kind != "missing" else None)
            for p, c in saved.items()
        ]  # fmt: skip
        actions = neutralize(self.workspace, undo, self.quarantine_dir)
        actions += self._remove_new_dirs(folders, existed)
        left = compare(before, view(folders, run=self.run), self.workspace)
        actions += [f"NOT undone: {d.detail}" for d in left]
        return Verdict(findings, [a for a in actions if a])

    def _finding(self, d: Difference, previous: Control | None = None) -> Finding:
        rel = rel_to(self.workspace, d.git_dir)
        what = "a repository git would discover" if d.kind == "repository" else d.what
        new = d.kind == "repository"
        return Finding(d.kind, rel, "view", new, d.path, d.detail, what, previous)

    def _remove_new_dirs(self, folders: list[str], existed: set[str]) -> list[str]:
        """Folders the change created (`refs/heads/` for a planted ref) are what made git take
        their parent for a repository: an emptied `refs/` still counts."""
        out = []
        for d in sorted(set(folders) - existed, key=lambda d: -d.count(os.sep)):
            parent, name = os.path.split(rel_to(self.workspace, d))
            try:
                fd = open_dir_beneath(Path(self.workspace), parent)  # never through a link
            except (OSError, UnsafePath):
                continue
            try:
                os.rmdir(name, dir_fd=fd)  # only when empty: whatever else is in it is someone's
            except OSError:
                continue
            finally:
                os.close(fd)
            out.append(f"removed the folder {rel_to(self.workspace, d)} it created")
        return out

    # --- commands: the whole tree is walked (guard.py); git's view adds what a walk by name
    # cannot know, a file the person's own settings name and the hooks git resolves. --------

    def command_folders(self, *states: GitState, parse: ParseConfig | None = None) -> list[str]:
        """Where git finds each repository of these snapshots whose settings name a file to
        run (what the walk cannot follow), and the workspace when no repository sits at its
        root (git then answers from a repository above it, or says there is none). Asking
        every repository would cost two git runs per nested repository per command."""
        parse = parse or default_parser
        out = []
        for state in states:
            if not any(r.entry in ("", ".git") for r in state.repos.values()):
                out.append(self.workspace)
            for repo in state.repos.values():
                if not any(_names_a_file(state.files.get(c), parse) for c in repo.configs):
                    continue
                start = repo.entry if repo.kind == "bare" else os.path.dirname(repo.entry)
                out.append(os.path.join(self.workspace, start) if start else self.workspace)
        return list(dict.fromkeys(out))

    def command_view(self, folders: list[str]) -> View:
        return view(folders, run=self.run)

    def command_findings(
        self, before: View, after: View, state: GitState, covered: list[Finding]
    ) -> list[Finding]:
        """The view's differences the walk did not report, each with what to put back. A new
        repository is the walk's to judge (a clean `git init` is the model's right)."""
        seen = {os.path.realpath(f.path) for f in covered}
        out = []
        for d in compare(before, after, self.workspace):
            if d.kind == "repository" or os.path.realpath(d.path) in seen:
                continue
            seen.add(os.path.realpath(d.path))
            out.append(self._finding(d, previous=_previous(before, d, state)))
        return out


def _names_a_file(control: Control | None, parse: ParseConfig) -> bool:
    if control is None or control.data is None:
        return control is not None and control.kind == "file"  # too big to read: ask git
    for key, value in parse(control.data) or ():
        if key == "core.hookspath":
            return True  # what its hooks start from the tree (husky's scripts): view.py
        if split_key(key)[2] == "path":
            continue  # a config file: the walk follows it itself
        if "/" in value and danger(key, value):
            return True
    return False


def _previous(before: View, d: Difference, state: GitState) -> Control | None:
    """What the file behind a difference held before, when known (None: it did not exist)."""
    if d.kind == "config":
        return state.files.get(d.path)
    repo = before.repos.get(d.git_dir)
    if repo is None:
        return None
    if d.kind == "program":
        hit = repo.named.get(d.path)
    else:
        same_dir = os.path.dirname(d.path) == repo.hooks_dir
        hit = repo.hooks.get(os.path.basename(d.path)) if same_dir else None
    return None if hit is None or hit.control.kind == "missing" else hit.control


def _inside(ws: str, path: str) -> bool:
    return path == ws or path.startswith(ws + os.sep)


def _under_any(path: str, dirs: list[str]) -> bool:
    return any(d and _inside(d, path) for d in dirs)


_GUARDS: dict[str, ChangeGuard] = {}
_GUARDS_LOCK = threading.Lock()


def guard_for(workspace: str | Path) -> ChangeGuard:
    """The process's one guard for this workspace."""
    ws = os.path.realpath(workspace)
    with _GUARDS_LOCK:
        guard = _GUARDS.get(ws)
        if guard is None:
            guard = _GUARDS[ws] = ChangeGuard(ws)
        return guard


__all__ = ["MISSING", "ChangeGuard", "Verdict", "guard_for"]
