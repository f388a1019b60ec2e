"""The git guard's walk only when the change set says git's files may have moved.

guard.snapshot walks the whole tree by name before and after every command, because a
repository can hide at any depth: on 100,000 files that was a third of a `bash` round's cost.
The workspace's watch (fingerprint/watch.py, every folder, ignored ones included) already knows what each
command changed, so the snapshot of the last check is reused when NOTHING since then could change
what the snapshot would read, and the full walk runs otherwise. Reused only when all hold:

- the watch is exact (no overflow, no failure, every folder watched) since that snapshot;
- no changed path is, or is inside, a `.git`; none is named HEAD, objects, refs or commondir
  (what makes a folder a bare repository); none is a control file the snapshot read (config,
  include targets, hooks, gitfiles, attributes, even ones missing then); none is inside a known
  repository's git dir, common dir or hooks folder; no folder that vanished or appeared holds one
  of those (its entries are journalled one by one when it appears); no folder changed mode (an
  unlistable folder is itself a finding);
- every repository it knows has its git dir, common dir and hooks folder inside the workspace
  (outside, no event tells: the walk runs every time, as before);
- every control file the snapshot read, re-read now, has the same digest (a file outside the
  workspace, or in a quiet folder watched for names only, changes without an event here).

Git's own view (view.py, what the walk by name cannot follow) is asked every time, as before.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..fingerprint.watch import TreeWatch, current
from . import guard
from .config_rules import ParseConfig
from .guard import Finding
from .snapshot import GitState, read_control, snapshot

GIT_NAMES = frozenset({".git", "HEAD", "objects", "refs", "commondir"})

_LAST: dict[str, tuple[GitState, int, TreeWatch]] = {}
_LOCK = threading.Lock()


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def mark(workspace: str | Path) -> tuple[TreeWatch | None, int]:
    """The workspace's watch and its cursor now (taken BEFORE any walk that follows)."""
    tw = current(workspace)
    return tw, (tw.cursor() if tw is not None else 0)


def remember(workspace: str | Path, state: GitState, at: tuple[TreeWatch | None, int]) -> None:
    """`state` is the tree as of cursor `at` (taken before the walk that made it)."""
    tw, cursor = at
    ws = os.path.realpath(workspace)
    with _LOCK:
        if tw is None:
            _LAST.pop(ws, None)
        else:
            _LAST[ws] = (state, cursor, tw)


def _still(ws: str, at: tuple[TreeWatch | None, int]) -> GitState | None:
    """The last snapshot of `ws` when nothing git reads has changed since it, by the watch that
    gave `at`; else None."""
    tw = at[0]
    with _LOCK:
        hit = _LAST.get(ws)
    if hit is None or tw is None or hit[2] is not tw:
        return None
    state, cursor, _ = hit
    return state if unchanged(state, tw, cursor) else None


def before(workspace: str | Path, *, parse: ParseConfig | None = None) -> GitState:
    """The snapshot a command's check starts from: the last one when nothing git reads has
    changed since, else a walk. Remembered with its cursor."""
    ws = os.path.realpath(workspace)
    at = mark(ws)
    last = _still(ws, at)
    if last is not None:
        remember(ws, last, at)  # still true as of now: the next look starts here
        return last
    state = snapshot(ws, parse=parse)
    remember(ws, state, at)
    return state


def check_state(
    workspace: str | Path, before_state: GitState, *, parse: ParseConfig | None = None
) -> tuple[list[Finding], GitState]:
    """guard.check_state, without its walk when nothing git reads changed since
    `before_state` was taken (then the tree's snapshot IS `before_state`: nothing to report)."""
    ws = os.path.realpath(workspace)
    at = mark(ws)
    if _still(ws, at) is before_state:
        remember(ws, before_state, at)
        return [], before_state
    findings, after = guard.check_state(ws, before_state, parse=parse)
    remember(ws, after, at)
    return findings, after


def fresh(workspace: str | Path, *, parse: ParseConfig | None = None) -> GitState:
    """A walk, remembered (after something was undone)."""
    at = mark(workspace)
    state = snapshot(workspace, parse=parse)
    remember(workspace, state, at)
    return state


def unchanged(state: GitState, tw: TreeWatch | None, cursor: int) -> bool:
    """True when no change since `cursor` can make `snapshot` differ from `state` (module doc)."""
    if tw is None or not tw.healthy:
        return False
    ch = tw.since(cursor)
    if ch.all or ch.modes or not tw.healthy:
        return False
    ws = state.workspace
    roots: list[str] = []
    for repo in state.repos.values():
        if repo.git_dir is None:
            return False  # an indirection to nowhere yet: it may be made outside
        dirs = [repo.git_dir, repo.common_dir or repo.git_dir]
        if repo.hooks_dir:
            dirs.append(os.path.realpath(repo.hooks_dir))
        if not all(_inside(ws, d) for d in dirs):
            return False
        entry = os.path.join(ws, repo.entry) if repo.entry else ws
        roots += [*dirs, entry]
    files = state.files
    for rel in ch.paths | ch.trees:
        parts = rel.split("/")
        if ".git" in parts or parts[-1] in GIT_NAMES:
            return False
        path = os.path.join(ws, rel)
        if path in files or any(_inside(r, path) for r in roots):
            return False
    for rel in ch.trees:  # a folder that vanished, moved or appeared: what was in it
        path = os.path.join(ws, rel)
        if any(_inside(path, r) for r in roots) or any(_inside(path, f) for f in files):
            return False
    for path, control in files.items():
        now = read_control(path)
        if (now.kind, now.digest, now.mode) != (control.kind, control.digest, control.mode):
            return False
    return True


def forget(workspace: str | Path) -> None:
    with _LOCK:
        _LAST.pop(os.path.realpath(workspace), None)
