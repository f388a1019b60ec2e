"""Where a path lands relative to the workspace: inside, protected, or outside.

Every path and the workspace root are realpath'd here again, even when the caller says it already
did: a workspace opened through a symlink (`~/code -> /mnt/data/code`) would otherwise make every
file in it look "outside", and a symlink inside pointing out would look "inside".
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from .glob import glob_match

Where = Literal["inside", "protected", "outside"]

# Writable inside the workspace, but a write there changes what runs later with the person's
# rights: a git hook runs on their next commit, .git/config can set core.hooksPath or an alias, and
# the app's own config can widen the sandbox. Matched case-insensitively because a case-insensitive
# filesystem (a mounted volume) would open `.GIT/hooks` as `.git/hooks`.
PROTECTED_DEFAULT: tuple[str, ...] = ("/.git/hooks", "/.git/config", "/.cerveau/config.toml")


def realpath(path: Path | str, base: Path) -> Path:
    """Absolute, `..`-free, symlink-resolved. Relative paths are taken from `base`; `~` is NOT
    expanded (a model's `~` is not the person's home; resolve_path makes it a workspace name)."""
    p = Path(path)
    if not p.is_absolute():
        p = base / p
    return Path(os.path.realpath(p))


def display(path: Path | str) -> str:
    """A path a person can read, even a non-UTF-8 one (its undecodable bytes shown as \\xNN)."""
    return os.fsencode(str(path)).decode("utf-8", errors="backslashreplace")


class Boundary:
    def __init__(self, workspace: Path, protected_extra: list[str] | tuple[str, ...] = ()) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.protected = (*PROTECTED_DEFAULT, *protected_extra)

    def rel(self, path: Path) -> str | None:
        """The workspace-relative posix path, '' for the root itself, None when outside."""
        try:
            rel = path.relative_to(self.workspace)
        except ValueError:
            return None
        return rel.as_posix() if str(rel) != "." else ""

    def match_name(self, path: Path) -> str:
        """What glob patterns are matched against: relative inside, absolute outside."""
        rel = self.rel(path)
        return rel if rel is not None else path.as_posix()

    def where(self, path: Path) -> Where:
        rel = self.rel(path)
        if rel is None:
            return "outside"
        if rel and any(glob_match(p, rel, case_sensitive=False) for p in self.protected):
            return "protected"
        return "inside"

    def show(self, path: Path) -> str:
        rel = self.rel(path)
        if rel is None:
            return display(path)
        return display(rel or ".")


def room_for(path: Path) -> Path | None:
    """The existing path a sandbox must make writable so `path` can be written: the path itself if
    it exists, else its nearest existing ancestor (a bind mount needs an existing source). Never `/`
    itself: a writable root is "unsandboxed" under another name."""
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    if p == p.parent:
        return None
    # Never offered where no grant can reach (a kernel interface, the harness's own files): the
    # runners drop such a grant anyway (sandbox/grantable.py).
    from ..sandbox.grantable import grant_refusal

    if grant_refusal(p) is not None:
        return None
    store = _rules_store()
    return None if p == store or p in store.parents else p


def own_paths() -> list[Path]:
    """The harness's own interpreter, package and control files (sandbox/view.py), found from
    the running process: the file tools never write them, wherever the workspace is. An editable
    checkout inside the workspace (cerveau on itself) ran the model's edit at the next start."""
    from ..sandbox.view import control_paths, runtime_paths

    return [*runtime_paths(), *control_paths(), _rules_store()]


def _rules_store() -> Path:
    # The lasting rules (rules_store.py) decide the next session's boundary too: sealed, so a
    # write cannot forge one, but a write could delete a "never".
    from .rules_store import store_path

    return Path(os.path.realpath(store_path()))


def own_refusal(path: Path, own: list[Path]) -> str | None:
    hit = next((o for o in own if path == o or o in path.parents), None)
    if hit is None:
        return None
    return (
        f"{display(path)} is part of the running harness ({display(hit)}: its interpreter, code "
        "or control files); the file tools never write there"
    )


def hidden_writes(named: list[str], boundary: Boundary) -> list[Path]:
    """Paths a failed write named that lie outside the workspace where the host has their folder:
    the allow-listed sandbox does not show them, so "no such file" there means "refused"."""
    out = [Path(os.path.realpath(p)) for p in named]
    return [q for q in out if boundary.where(q) == "outside" and q.parent.is_dir()]


def app_refusal(
    boundary: Boundary,
    deny_read: list[Path],
    own: list[Path],
    reads: list[Path],
    writes: list[Path],
) -> str | None:
    """What the file tools refuse in every mode but full-access (policy.py's first question)."""
    for p in [*reads, *writes]:
        hit = next((d for d in deny_read if p == d or d in p.parents), None)
        if hit is not None:
            return (
                f"{display(p)} is on the deny-read list ({display(hit)}: secrets and the app's own "
                "config); the person can change `deny_read` in their own config"
            )
    for p in reads:
        # A read of a folder is a read of all it holds: `search /root` (approved as a read
        # outside) ran rg over /root/.ssh and sent a key's line to the model. Inside the
        # workspace the search runs in the sandbox, where the deny-read paths are masked.
        held = next((d for d in deny_read if p in d.parents), None)
        if held is not None and boundary.where(p) == "outside":
            return (
                f"{display(p)} holds {display(held)}, which is on the deny-read list: name a "
                "folder that does not hold it; the person can change `deny_read` in their own config"
            )
    for p in writes:
        if (refusal := own_refusal(p, own)) is not None:
            return refusal
        rel = boundary.rel(p)
        if rel is None:
            continue
        parts = [x.lower() for x in rel.split("/")]
        if ".git" in parts:
            return f"{display(rel)} is inside git's own folder; the file tools never write there (it can run code at the next git command)"
        if parts[0] == ".cerveau":
            return f"{display(rel)} is the app's own state; the file tools never write there"
    return None
