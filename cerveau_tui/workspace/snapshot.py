"""The fingerprint's value: a Snapshot (rel_path -> blake3 of the bytes), its digest, and diffs.

The digest is two-level (each folder's sorted (name, digest) pairs, then the sorted folders) so
the fingerprint kept by the kernel's change set (live.py) recomputes only the folders that
changed; a walk computes the same value from scratch. Snapshots of one Fingerprinter carry their
place in its change journal, so `diff_snapshots` between two of them looks at the paths that
changed in between, not at 100,000 files.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import blake3


class Snapshot(Mapping[str, str]):
    """rel_path (posix) -> hex digest of the file's bytes, immutable."""

    def __init__(
        self,
        entries: Mapping[str, str],
        *,
        _digest: str | None = None,
        _lineage: tuple[_Journal, int] | None = None,
    ) -> None:
        # Sorted lazily: most scans are only compared by digest or looked up by path, and
        # sorting 10,000 keys on every scan was a tenth of the warm scan's cost.
        self._entries = dict(entries)
        self._sorted = False
        self._digest = _digest
        self._lineage = _lineage  # (the fingerprint's change journal, this snapshot's number)

    def _sort(self) -> dict[str, str]:
        if not self._sorted:
            self._entries = dict(sorted(self._entries.items()))
            self._sorted = True
        return self._entries

    def __getitem__(self, key: str) -> str:
        return self._entries[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._entries.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._sort())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Snapshot({len(self)} files, digest={self.digest[:12]})"

    @property
    def digest(self) -> str:
        """A two-level blake3 (tree_digest): byte-identical workspaces agree, and a fingerprint
        kept by the kernel's change set recomputes only the folders that changed."""
        if self._digest is None:
            self._digest = tree_digest(self._entries)
        return self._digest


def _by_dir(entries: Mapping[str, str]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for rel, digest in entries.items():
        d, _, name = rel.rpartition("/")
        out.setdefault(d, []).append((name, digest))
    return {d: items for d, items in out.items()}


def dir_digest(items: list[tuple[str, str]]) -> str:
    """blake3 over one folder's sorted (name, digest) pairs. NUL separates the fields because it
    is the one byte a path cannot contain, so no two listings serialise to the same stream."""
    stream = "".join(f"{name}\0{digest}\0" for name, digest in sorted(items))
    return blake3.blake3(stream.encode("utf-8", "surrogateescape")).hexdigest()


def top_digest(dir_digests: Mapping[str, str]) -> str:
    """blake3 over the sorted (folder, dir_digest) pairs of the folders that hold files."""
    stream = "".join(f"{d}\0{dd}\0" for d, dd in sorted(dir_digests.items()))
    return blake3.blake3(stream.encode("utf-8", "surrogateescape")).hexdigest()


def tree_digest(entries: Mapping[str, str]) -> str:
    return top_digest({d: dir_digest(items) for d, items in _by_dir(entries).items()})


class _Journal:
    """Which paths each snapshot of one fingerprint changed, so a diff between two of them looks
    at those paths only (diff_snapshots), not at every file."""

    KEEP = 4096

    def __init__(self) -> None:
        self.base = 1  # number of the first snapshot whose change set is kept
        self.sets: list[frozenset[str]] = []

    def add(self, changed: frozenset[str]) -> int:
        self.sets.append(changed)
        if len(self.sets) > self.KEEP:
            cut = len(self.sets) - self.KEEP // 2
            del self.sets[:cut]
            self.base += cut
        return self.base + len(self.sets) - 1

    def between(self, a: int, b: int) -> set[str] | None:
        """Paths changed after snapshot a up to snapshot b; None when not known."""
        if a > b or a + 1 < self.base:
            return None
        out: set[str] = set()
        for s in self.sets[a + 1 - self.base : b + 1 - self.base]:
            out |= s
        return out


def diff_snapshots(prev: Mapping[str, str], cur: Mapping[str, str]) -> list[str]:
    """Paths added, removed or modified between two snapshots, sorted."""
    if prev is cur:
        return []
    if isinstance(prev, Snapshot) and isinstance(cur, Snapshot):
        a, b = prev._lineage, cur._lineage
        if a is not None and b is not None and a[0] is b[0]:
            paths = a[0].between(a[1], b[1])
            if paths is not None:
                return sorted(p for p in paths if prev.get(p) != cur.get(p))
    changed = {p for p, d in cur.items() if prev.get(p) != d}
    changed.update(p for p in prev if p not in cur)
    return sorted(changed)
