"""Where git would wait forever: a file it reads that is not a file.

Probed: with `.git/HEAD` replaced by a FIFO (`mkfifo` is one sandboxed command away), every
`git rev-parse` the guard ran waited out its 10 s timeout, a write cost 40 s, and the view came
back "git could not be run": the guard said "NOT checked" for EVERY folder of the change, a
nested repository's planted hook included. The person's own `git status` in that folder never
returns. A named pipe, a device, a socket or a file of /proc or /sys (`/proc/kmsg` is a regular
file that blocks) where git reads its metadata is refused by kind, before git is asked: the
folder's repository is "git would hang here", which is itself a change the guard reports.

What git reads there before it can answer: the `.git` entry (a gitfile is read), the git dir's
`HEAD`, `commondir`, `config` and `config.worktree`, the common dir's `config`, and every file an
`include.path` / `includeIf.*.path` names, recursively (git's own depth limit is 10). Only
`stat` and non-blocking opens are used here.
"""

from __future__ import annotations

import os
import stat

from .config_rules import ParseConfig, include_paths
from .snapshot import read_control
from .special import stalls

_MAX_DEPTH = 10


def blocker(folder: str, parse: ParseConfig) -> tuple[str, str] | None:
    """(the git dir git's upward search from `folder` reaches first, the file in it git would wait
    on), or None when nothing on the way can stall git."""
    hit = _blocker(os.path.abspath(folder), parse)
    return None if hit is None else (os.path.realpath(hit[0]), hit[1])


def _blocker(d: str, parse: ParseConfig) -> tuple[str, str] | None:
    while True:
        dotgit = os.path.join(d, ".git")
        try:
            st = os.stat(dotgit)
        except OSError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                hit = _git_dir(dotgit, parse)
                return (dotgit, hit) if hit else None
            if stalls(dotgit):
                return dotgit, dotgit
            target = _gitfile(dotgit)
            if target is None:
                return None  # not a gitfile git accepts: rev-parse says so without waiting
            hit = _git_dir(target, parse)
            return (target, hit) if hit else None
        if _looks_bare(d):
            hit = _git_dir(d, parse)
            return (d, hit) if hit else None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _git_dir(git_dir: str, parse: ParseConfig) -> str | None:
    for name in ("HEAD", "commondir", "config", "config.worktree"):
        hit = stalls(os.path.join(git_dir, name))
        if hit:
            return hit
    configs = [os.path.join(git_dir, "config"), os.path.join(git_dir, "config.worktree")]
    common = read_control(os.path.join(git_dir, "commondir"), follow=True)
    if common.data is not None:
        text = common.data.decode("utf-8", "replace").strip()
        common_dir = os.path.normpath(os.path.join(git_dir, text))
        for name in ("HEAD", "config"):
            hit = stalls(os.path.join(common_dir, name))
            if hit:
                return hit
        configs.append(os.path.join(common_dir, "config"))
    return _includes(configs, parse, 0)


def _includes(configs: list[str], parse: ParseConfig, depth: int) -> str | None:
    if depth > _MAX_DEPTH:
        return None
    for path in configs:
        control = read_control(path, follow=True)
        if control.data is None:
            continue
        named = []
        for value in include_paths(parse(control.data) or frozenset()):
            target = os.path.normpath(
                os.path.join(os.path.dirname(path), os.path.expanduser(value))
            )
            hit = stalls(target)
            if hit:
                return hit
            named.append(target)
        hit = _includes(named, parse, depth + 1)
        if hit:
            return hit
    return None


def _gitfile(path: str) -> str | None:
    control = read_control(path, follow=True)
    if control.data is None:
        return None
    text = control.data.decode("utf-8", "replace").strip()
    if not text.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(path), text[len("gitdir:") :].strip()))


def _looks_bare(d: str) -> bool:
    return all(os.path.exists(os.path.join(d, n)) for n in ("HEAD", "objects", "refs"))
