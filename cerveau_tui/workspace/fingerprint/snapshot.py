"""The fingerprint's value: a Snapshot (rel_path -> blake3 of the bytes), its digest, and diffs.

The digest is two-level (each folder's sorted (name, digest) pairs, then the sorted folders) so
the fingerprint kept by the kernel's change set (live.py) recomputes only the folders that
changed; a walk computes the same value from scratch. Snapshots of one Fingerprinter carry their
place in its change journal, so `diff_snapshots` between two of them looks at the paths that
changed in between, not at 100,000 files.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping

import blake3


class Snapshot(Mapping[str, str]):
    """rel_path (posix) -> hex digest of the file's bytes, immutable.

    Built from a flat mapping (a walk), or from folders (`_dirs`: folder -> {rel: digest}, each
    inner mapping never changed afterwards): the live fingerprint shares the folders that did not
    change between its snapshots, so taking one costs O(folders), not O(files)."""

    def __init__(
        self,
        entries: Mapping[str, str] | None = None,
        *,
        _digest: str | None = None,
        _lineage: tuple[_Journal, int] | None = None,
        _dirs: Mapping[str, Mapping[str, str]] | None = None,
        _len: int = 0,
    ) -> None:
        # Sorted lazily: most scans are only compared by digest or looked up by path, and
        # sorting 10,000 keys on every scan was a tenth of the warm scan's cost.
        self._dirs = _dirs
        self._entries: dict[str, str] | None = None
        if _dirs is None:
            self._entries = dict(entries or {})
            _len = len(self._entries)
        self._len = _len
        self._sorted = False
        self._digest = _digest
        self._lineage = _lineage  # (the fingerprint's change journal, this snapshot's number)

    def _flat(self) -> dict[str, str]:
        """Every entry in one mapping: a folder-built snapshot's is made anew each time and not
        kept (every snapshot a session holds kept two flat copies of the tree once iterated)."""
        if self._entries is not None:
            return self._entries
        flat: dict[str, str] = {}
        for inner in (self._dirs or {}).values():
            flat.update(inner)
        return flat

    def _sort(self) -> dict[str, str]:
        if not self._sorted:
            self._entries = dict(sorted(self._flat().items()))
            self._sorted = True
        return self._entries  # type: ignore[return-value]

    def __iter__(self) -> Iterator[str]:
        if self._dirs is None:
            return iter(self._sort())
        # Sorted paths, without a copy of the mapping: the list of keys is all that is made.
        return iter(sorted(rel for inner in self._dirs.values() for rel in inner))

    def __getitem__(self, key: str) -> str:
        if self._entries is not None:
            return self._entries[key]
        inner = self._dirs.get(key.rpartition("/")[0]) if self._dirs is not None else None
        if inner is None:
            raise KeyError(key)
        return inner[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __len__(self) -> int:
        return self._len

    def __repr__(self) -> str:
        return f"Snapshot({len(self)} files, digest={self.digest[:12]})"

    @property
    def digest(self) -> str:
        """A Merkle blake3 (tree_digest): byte-identical workspaces agree, and a fingerprint
        kept by the kernel's change set recomputes only the folders that changed."""
        if self._digest is None:
            self._digest = tree_digest(self._flat())
        return self._digest


def _by_dir(entries: Mapping[str, str]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for rel, digest in entries.items():
        d, _, name = rel.rpartition("/")
        out.setdefault(d, []).append((name, digest))
    return out


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def dir_digest(items: list[tuple[str, str]]) -> str:
    """blake3 over one folder's sorted (name, digest) pairs. NUL separates the fields because it
    is the one byte a path cannot contain, so no two listings serialise to the same stream."""
    stream = "".join(f"{name}\0{digest}\0" for name, digest in sorted(items))
    return blake3.blake3(_encode(stream)).hexdigest()


BUCKETS = 256


def bucket_of(folder: str) -> int:
    """Which of BUCKETS groups a folder's digest goes in (a fixed function of its name)."""
    return zlib.crc32(_encode(folder)) % BUCKETS


def bucket_digest(dir_digests: Mapping[str, str]) -> str:
    """blake3 over one bucket's sorted (folder, dir_digest) pairs."""
    stream = "".join(f"{d}\0{dd}\0" for d, dd in sorted(dir_digests.items()))
    return blake3.blake3(_encode(stream)).hexdigest()


def top_digest(bucket_digests: Mapping[int, str]) -> str:
    """blake3 over the digests of the non-empty buckets, in bucket order (with their number)."""
    stream = "".join(f"{b}\0{bucket_digests[b]}\0" for b in sorted(bucket_digests))
    return blake3.blake3(_encode(stream)).hexdigest()


def tree_digest(entries: Mapping[str, str]) -> str:
    """files -> folders -> buckets -> one digest; the live fingerprint keeps the middle levels."""
    buckets: dict[int, dict[str, str]] = {}
    for d, items in _by_dir(entries).items():
        buckets.setdefault(bucket_of(d), {})[d] = dir_digest(items)
    return top_digest({b: bucket_digest(dds) for b, dds in buckets.items()})


class _Journal:
    """Which paths each snapshot of one fingerprint changed, so a diff between two of them looks
    at those paths only (diff_snapshots), not at every file."""

    KEEP = 4096

    def __init__(self) -> None:
        self.base = 1  # number of the first snapshot whose change set is kept
        self.sets: list[frozenset[str] | None] = []  # None: not known (every path, the first)

    def add(self, changed: frozenset[str] | None) -> int:
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
            if s is None:
                return None
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
