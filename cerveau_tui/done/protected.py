"""Protected files changed by commands, not only by the file tools.

The file tools say what they wrote; a shell command does not. `sed -i 's/== 3/== -1/'
tests/test_calc.py` weakens a test as surely as write_file does, and a model that learned the
file tools are watched would find that door. So after every command the protected files are
re-hashed and compared with what they were.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from ..workspace.io.beneath import read_bytes_beneath
from .criteria import DoneSet
from .near_green import workspace_files


def protected_state(workspace: Path, done: DoneSet) -> dict[str, str]:
    """rel -> content hash of every existing protected file (a bounded walk of the workspace)."""
    if not done.protected:
        return {}
    out: dict[str, str] = {}
    for rel in done.touched_protected(workspace_files(workspace)):
        try:
            out[rel] = hashlib.blake2b(
                read_bytes_beneath(workspace, rel), digest_size=16
            ).hexdigest()
        except OSError:
            continue
    return out


def changed_paths(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Protected paths created, modified or deleted between two states, sorted."""
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


def written_files(workspace: Path, written: Iterable[Path | str]) -> list[str]:
    """The session's written paths that are still files in the workspace, workspace-relative."""
    out = []
    for raw in list(written):
        p = Path(raw)
        full = p if p.is_absolute() else workspace / p
        if full.is_file() and full.is_relative_to(workspace):
            out.append(full.relative_to(workspace).as_posix())
    return out
