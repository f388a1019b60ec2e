"""Near-green checkpoints: keep the best workspace state seen, and go back to it when a later
cycle sprays new errors.

The failure this prevents: a model gets one test away from green, then "refactors" and leaves
eight failures behind, and the good state exists nowhere but in a scrolled-away diff. The best
state is stored in the content store (blake3-keyed), so restoring it is exact and cheap.
"""

from __future__ import annotations

import os
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


def workspace_files(workspace: Path, limit: int = MAX_FILES) -> list[str]:
    """The workspace's own files (relative, sorted), bounded so a huge tree cannot stall a turn."""
    out: list[str] = []
    for root, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(files):
            full = Path(root) / name
            try:
                if full.is_symlink() or full.stat().st_size > MAX_BYTES:
                    continue
            except OSError:
                continue
            out.append(full.relative_to(workspace).as_posix())
            if len(out) >= limit:
                return out
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

    def roll_back(self, written: Iterable[str]) -> list[str]:
        """Restore the best snapshot; files the session created since are removed. Returns the
        paths put back or removed, sorted."""
        assert self.snapshot is not None
        mapping = dict(self.snapshot)
        current = self.store.snapshot_files(list(mapping))
        changed = {rel for rel, digest in mapping.items() if current.get(rel) != digest}
        # Only files the session wrote are removed: a file the snapshot did not walk (too big,
        # a skipped directory) must not vanish because it is absent from the mapping.
        for rel in written:
            if rel not in mapping and (self.workspace / rel).is_file():
                mapping[rel] = None
                changed.add(rel)
        self.store.restore({rel: mapping[rel] for rel in changed})
        return sorted(changed)


def blob_store(workspace: Path) -> Store:
    """The default Store: the workspace's own blob store."""
    from ..workspace.store import BlobStore

    return BlobStore(workspace)
