"""A command must not leave code that the person's next `git` runs.

Probed: in a folder with no repository a command ran `git init` and set `core.fsmonitor`; in an
existing one it wrote `.git/commondir` pointing at a config it had planted. The person's next
`git status`, on the host with their full rights, ran the model's program. Bubblewrap binds the
root `.git` read-only only when it already exists; a repository the command creates (at the root
or in a subfolder), a `.git` FILE saying `gitdir: <anywhere>`, or a bare repository laid out by
hand (HEAD, objects/, refs/, config: git finds it when the person cds there) were not covered, and
under Landlock or no sandbox nothing in `.git` is read-only at all.

So the harness looks, before and after each command, at every place git would take code from:
- `snapshot` (snapshot.py, re-exported here) walks the whole workspace by name (os.scandir, never following a link: a repository
  can hide at any depth, so nothing is skipped) and records each `.git` (directory, file or link)
  and each directory git would take for a bare repository, with its control files: config (and
  the files it includes), config.worktree, commondir, the gitfile, info/attributes and every hook
  that is not a `*.sample`. Small files keep their bytes, so a change can be undone.
- `check` compares: a dangerous setting (config_rules.danger) that appeared in a config, a
  hook that appeared or changed (its bytes, or its mode: git runs only an executable hook), an
  indirection (gitfile, commondir, `.git` link) now pointing out of the workspace, a config git
  cannot parse. What was there before is the person's, not reported. A clean `git init` (sample hooks, default config) reports nothing: models legitimately
  create repositories, worktrees and submodules.
- `quarantine.neutralize` undoes each finding without losing anything.

Reading never follows a link at the final component (lstat, then O_NOFOLLOW|O_NONBLOCK, regular
files only, bounded): a control file that IS a link is reported as one, because git would follow
it. Directories are resolved with realpath, as git resolves them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .config_rules import ConfigItems, ParseConfig, danger
from .snapshot import (
    KEEP_BYTES,
    MISSING,
    Control,
    GitState,
    Repo,
    default_parser,
    read_control,
    rel_to,
    snapshot,
)
from .special import kind_of, stalls

__all__ = [
    "KEEP_BYTES",
    "MISSING",
    "Control",
    "Finding",
    "GitState",
    "Repo",
    "check",
    "check_state",
    "read_control",
    "snapshot",
]


@dataclass(frozen=True)
class Finding:
    """Something the command left that the person's next git would run (or follow)."""

    kind: str  # "config" | "hook" | "indirection" | "unscannable"
    repo: str  # Repo.entry
    repo_kind: str
    new_repo: bool  # the repository did not exist before the command
    path: str  # absolute path of the file that carries it
    detail: str  # "core.fsmonitor = '/x/y' (runs a program on every git status)"
    what: str  # short: "core.fsmonitor", "hook pre-commit"
    previous: Control | None = None  # that file before the command (None: it did not exist)

    def describe(self, workspace: str | Path) -> str:
        return f"{self.what} in {rel_to(str(workspace), self.path)}"


def _runs(c: Control) -> bool:
    return c.kind == "file" and bool(c.mode & 0o111)


def _inside(ws: str, path: str | None) -> bool:
    return path is not None and (path == ws or path.startswith(ws + os.sep))


def check(
    workspace: Path | str, before: GitState, *, parse: ParseConfig | None = None
) -> list[Finding]:
    """What the command left, compared with `before`, that the person's next git would run."""
    return check_state(workspace, before, parse=parse)[0]


def check_state(
    workspace: Path | str, before: GitState, *, parse: ParseConfig | None = None
) -> tuple[list[Finding], GitState]:
    """`check`, and the snapshot it compared `before` with."""
    parse = parse or default_parser
    after = snapshot(workspace, parse=parse)
    found: dict[tuple[str, str, str], Finding] = {}
    for repo in after.repos.values():
        for f in _RepoCheck(repo, before, after, parse).findings():
            found.setdefault((f.repo, f.path, f.detail), f)
    for rel in sorted(after.unscannable - before.unscannable):
        path = os.path.join(after.workspace, rel)
        why = "a folder the guard cannot list (a repository could hide in it)"
        found[(rel, path, "unscannable")] = Finding(
            "unscannable", rel, "dir", True, path, why, "unlistable folder"
        )
    return list(found.values()), after


@dataclass
class _RepoCheck:
    repo: Repo
    before: GitState
    after: GitState
    parse: ParseConfig
    out: list[Finding] = field(default_factory=list)

    def add(self, kind: str, path: str, what: str, detail: str) -> None:
        new = self.repo.entry not in self.before.repos
        prev = self.before.files.get(path)
        self.out.append(
            Finding(kind, self.repo.entry, self.repo.kind, new, path, detail, what, prev)
        )

    def findings(self) -> list[Finding]:
        repo, ws = self.repo, self.after.workspace
        for cfg in repo.configs:
            self._config(cfg, self.after.files[cfg], self.before.files.get(cfg))
        for hook in repo.hooks:
            now, was = self.after.files[hook], self.before.files.get(hook)
            # The mode counts as much as the bytes: git runs a hook only when it is executable,
            # so `chmod +x` on a hook the person had disabled is a new hook.
            enabled = _runs(now) and (was is None or not _runs(was))
            if was is None or was.digest != now.digest or enabled:
                name = os.path.basename(hook)
                how = (
                    "made executable"
                    if enabled and was is not None and was.digest == now.digest
                    else now.kind
                )
                self.add("hook", hook, f"hook {name}", f"hook {name} ({how})")
        self._stalls()
        prev = self.before.repos.get(repo.entry)
        moved = prev is None or (prev.git_dir, prev.common_dir) != (repo.git_dir, repo.common_dir)
        if not (repo.indirection and moved and repo.git_dir is not None):
            return self.out
        name = os.path.basename(repo.indirection)
        if not (_inside(ws, repo.git_dir) and _inside(ws, repo.common_dir)):
            # Out of the workspace we can neither vet nor freeze what it leads to.
            where = repo.git_dir if not _inside(ws, repo.git_dir) else repo.common_dir
            self.add(
                "indirection", repo.indirection, name, f"points outside the workspace ({where})"
            )
        elif self.out and prev is not None:
            # An existing repository re-pointed at a planted one: undo the pointer, not only the
            # planted config, or the person's repository stays swapped.
            self.add("indirection", repo.indirection, name, "re-pointed the repository")
        return self.out

    def _stalls(self) -> None:
        """A file git reads first (the `.git` entry, HEAD, commondir) that would make it wait
        forever: a named pipe, a device, a link into /proc (stall.py). The person's next
        `git status` would never return."""
        repo = self.repo
        paths = [repo.indirection] if repo.indirection else []
        if repo.git_dir is not None:
            paths += [os.path.join(repo.git_dir, "commondir"), *repo.stalling]
        for path in paths:
            was, now = self.before.files.get(path), self.after.files.get(path)
            if now is None or (was is not None and was.digest == now.digest):
                continue
            if stalls(path) is not None:
                name = os.path.basename(path)
                kind = "indirection" if repo.git_dir is None else "config"
                what = f"{name} ({kind_of(path)})"
                self.add(kind, path, what, f"{name} is a {kind_of(path)}: git would wait forever")

    def _config(self, path: str, now: Control, was: Control | None) -> None:
        if now.kind == "missing" or (was is not None and was.digest == now.digest):
            return
        name = os.path.basename(path)
        if now.kind != "file":
            self.add(
                "config",
                path,
                f"{name} ({now.kind})",
                f"{name} is a {now.kind}; git would follow it",
            )
            return
        items = self.parse(now.data) if now.data is not None else None
        if items is None:
            why = "larger than we keep" if now.data is None else "git could not parse it"
            self.add("config", path, f"{name} (unchecked)", f"{name} cannot be checked: {why}")
            return
        old: ConfigItems = frozenset()
        if was is not None and was.data is not None:
            old = self.parse(was.data) or frozenset()
        for key, value in sorted(items - old):
            reason = danger(key, value)
            if reason is not None:
                self.add("config", path, key, f"{key} = {value!r} ({reason})")
