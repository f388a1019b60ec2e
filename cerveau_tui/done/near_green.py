"""Near-green checkpoints: keep the best workspace state seen, and go back to it when a later
cycle sprays new errors.

The failure this prevents: a model gets one test away from green, then "refactors" and leaves
eight failures behind, and the good state exists nowhere but in a scrolled-away diff. The best
state is stored in the content store (blake3-keyed), so restoring it is exact and cheap.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

#: Directories a snapshot never walks: tool caches and environments are not the work, and a venv
#: would make every snapshot cost thousands of hashes.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".cerveau",
        ".pytest_cache",
        ".ruff_cache",
        ".mypy_cache",
        ".tox",
        "build",
        "dist",
        "target",
    }
)
MAX_FILES = 5000
MAX_BYTES = 2_000_000


class Store(Protocol):
    def snapshot_files(self, paths: Iterable[str | Path]) -> dict[str, str | None]: ...

    def restore(self, mapping: Mapping[str, str | None]) -> None: ...


#: Deeper folders are not walked: a model's `cd a; mkdir a` loop made os.walk (recursive on
#: Python 3.11) die of RecursionError, which ended the gated turn as an internal error.
MAX_DEPTH = 64


def workspace_files(workspace: Path, limit: int = MAX_FILES) -> list[str]:
    """The workspace's own regular files (relative, in walk order), bounded so a huge tree cannot
    stall a turn. Only regular files: a FIFO has no bytes to snapshot, and reading one blocks
    (one in the workspace ended a gated turn as "internal error"); links are not followed."""
    out: list[str] = []
    stack = [""]  # folders still to read, relative; the next one on top
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(workspace / rel_dir if rel_dir else workspace) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[str] = []
        for e in entries:
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if e.name not in SKIP_DIRS and not e.name.endswith(".egg-info"):
                    if rel.count("/") < MAX_DEPTH:
                        subdirs.append(rel)
            elif stat.S_ISREG(st.st_mode) and st.st_size <= MAX_BYTES:
                out.append(rel)
                if len(out) >= limit:
                    return out
        stack.extend(reversed(subdirs))
    return out


Score = tuple[int, int]  # (unmet criteria, errors): fewer unmet first, then fewer errors


@dataclass
class NearGreen:
    """The best state seen and whether to roll back to it.

    The first observation only sets the bar: the untouched workspace is not a checkpoint worth
    returning to, since going back to it would erase every edit, good ones included.
    """

    store: Store
    workspace: Path
    best: Score | None = None
    best_errors: list[str] = field(default_factory=list)
    snapshot: dict[str, str | None] | None = None

    def observe(self, unmet: Sequence[str], errors: Sequence[str]) -> bool:
        """Record a checked state; snapshot it if it beats the best. True when it did."""
        score = (len(unmet), len(set(errors)))
        if self.best is None:
            self.best, self.best_errors = score, list(errors)
            return False
        if score < self.best:
            self.snapshot = self.store.snapshot_files(workspace_files(self.workspace))
            self.best, self.best_errors = score, list(errors)
            return True
        return False

    def capture(self) -> None:
        """Checkpoint the current state unconditionally: it is green, the best there is. The
        polish round (polish.py) comes back here when tidying breaks the check."""
        self.snapshot = self.store.snapshot_files(workspace_files(self.workspace))
        self.best, self.best_errors = (0, 0), []

    def should_roll_back(
        self, unmet: Sequence[str], errors: Sequence[str], progressed: bool
    ) -> bool:
        """More errors than the best, some of them new, and no progress: the cycle sprayed."""
        if self.snapshot is None or self.best is None or progressed:
            return False
        new = set(errors) - set(self.best_errors)
        return len(unmet) >= self.best[0] and len(set(errors)) > self.best[1] and bool(new)

    def _diff(self, written: Iterable[str]) -> dict[str, str | None]:
        """What a rollback would write: rel -> the snapshot's digest (None: remove the file)."""
        assert self.snapshot is not None
        mapping = dict(self.snapshot)
        current = self.store.snapshot_files(list(mapping))
        diff = {rel: d for rel, d in mapping.items() if current.get(rel) != d}
        # Only files the session wrote are removed: a file the snapshot did not walk (too big,
        # a skipped directory) must not vanish because it is absent from the mapping.
        for rel in written:
            if rel not in mapping and (self.workspace / rel).is_file():
                diff[rel] = None
        return diff

    def changed(self, written: Iterable[str]) -> list[str]:
        """The paths a rollback would put back or remove, sorted; empty when the workspace is
        the best state already."""
        return sorted(self._diff(written)) if self.snapshot is not None else []

    def roll_back(self, written: Iterable[str]) -> list[str]:
        """Restore the best snapshot; files the session created since are removed. Returns the
        paths put back or removed, sorted."""
        diff = self._diff(written)
        changed = set(diff)
        # Through the workspace's git guard, like every write (workspace/git/change.py): a
        # rollback it undid restored nothing, and the guard has told the person.
        from ..workspace.git.change import guard_for

        _, verdict = guard_for(self.workspace).change(
            sorted(changed), lambda: self.store.restore(diff)
        )
        return [] if verdict else sorted(changed)


def blob_store(workspace: Path) -> Store:
    """The default Store: the workspace's own blob store."""
    from ..workspace.restore.store import BlobStore

    return BlobStore(workspace)
