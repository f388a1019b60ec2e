"""The workspace fingerprint: one digest that changes exactly when a tracked file's bytes change.

Progress detection ("has the artifact changed in eight iterations?") and plan checkpoints both ask
this question after every iteration, so it must be cheap when nothing changed. Hashing is cheap
(blake3 reads ~4 GB/s); walking and reading are not. So a stat cache keyed by (size, mtime_ns,
inode) skips every file whose metadata is unchanged, and only what changed is read and hashed.

The digest of a file is blake3 of its bytes, the same key the blob store uses, so a checkpoint hash
can be looked up in the store to restore that version.

Here: the Fingerprinter's API, its snapshots, the kernel's change set and the first build in the
background. The stat cache and the walk are stat_cache.py (its base class); the digest digest.py.
"""

from __future__ import annotations

import os
import queue
import stat
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypedDict

from . import watch
from .digest import hash_bytes, hash_path
from .live import LiveTree
from .rules import RACY_WINDOW_NS
from .snapshot import (
    Snapshot,
    _Journal,
    bucket_digest,
    bucket_of,
    diff_snapshots,
    dir_digest,
    top_digest,
)
from .stat_cache import StatCache
from .watch import TreeWatch

DEFAULT_IGNORE_DIRS = (".git", ".cerveau", ".venv", "node_modules", "__pycache__")
PROGRESS_FILES = 5000  # the first build says its progress every this many files


class WatchStatus(TypedDict):
    method: str  # "inotify" or "walk"
    reason: str | None  # why not inotify
    watches: int
    ready: bool  # the first build is done
    files: int | None


class Fingerprinter(StatCache):
    """Stat-cached blake3 fingerprints of the files under `root`.

    Skips `ignore_dirs` by name at any depth and whatever .gitignore files (root and nested) say.
    Symlinks are not followed: a link's digest is that of its target string, so repointing it
    counts as a change and a link out of the workspace is never read.

    `watch=True`: after one walk the fingerprint is kept current from the kernel's change set
    (watch.py, live.py), so a scan costs O(changed); when the watch cannot be exact (its limit,
    an overflow it cannot recover from, a network filesystem) it walks, and `status()` says why.
    CERVEAU_FINGERPRINT=walk in the environment forces the walk.
    """

    def __init__(
        self,
        root: Path,
        ignore_dirs: tuple[str, ...] = DEFAULT_IGNORE_DIRS,
        *,
        clock: Callable[[], int] = time.time_ns,
        hasher: Callable[[Path, int], str] = hash_path,
        watch: bool = False,
    ) -> None:
        super().__init__(root, ignore_dirs, clock=clock, hasher=hasher)
        self.last: Snapshot | None = None
        self._journal = _Journal()
        self._dir_digests: dict[str, str] = {}  # the live fingerprint's folders (_live_snapshot)
        self._snap_dirs: dict[str, dict[str, str]] = {}
        self._buckets: dict[int, set[str]] = {}
        self._bucket_digests: dict[int, str] = {}
        self._ready = threading.Event()
        self._ready.set()
        self._told = threading.Event()  # the first build's progress lines all delivered
        self._told.set()
        self._starter: threading.Thread | None = None
        self._pending: list[PendingScan] = []
        self._pending_lock = threading.Lock()
        self._live: LiveTree | None = None  # while the watch is exact
        self._watch: TreeWatch | None = None
        self.method = "walk"
        self.reason: str | None = "not asked to watch" if not watch else None
        if watch:
            self._want_watch()

    # --- public ---------------------------------------------------------------------------------

    def start(self, progress: Callable[[str, float | None, str], object] | None = None) -> None:
        """Build the first snapshot in the background; the first scan waits for it if it must.
        `progress(stage, fraction, line)`: what the status bar shows meanwhile."""
        if self._starter is not None:
            return
        self._ready.clear()
        self._told.clear()
        self._starter = threading.Thread(
            target=self._first, args=(progress,), name="cerveau-fingerprint", daemon=True
        )
        self._starter.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Built, and its progress told. A scan waits for the build only: the telling may wait on
        the one who scans (see _first)."""
        return self._ready.wait(timeout) and self._told.wait(timeout)

    def status(self) -> WatchStatus:
        """What doctor says: how the fingerprint is kept, why, and how far its first build is."""
        tw = self._watch
        return WatchStatus(
            method=self.method,
            reason=self.reason,
            watches=tw.watches if tw is not None else 0,
            ready=self._ready.is_set(),
            files=len(self.last) if self.last is not None else None,
        )

    def close(self) -> None:
        with self._lock:
            self._stop_watch(self.reason or "closed")

    def scan(self) -> Snapshot:
        self._ready.wait()
        with self._lock:
            if self._live is None and self._watch is not None:
                self._build()  # not started in the background: the first scan builds it
            if self._live is not None:
                try:
                    return self._live_snapshot(self._live)
                except Exception as exc:  # WatchFailed, or a bug: never a wrong fingerprint
                    self._stop_watch(str(exc) or type(exc).__name__)
            return self._walk_scan()

    def _walk_scan(self) -> Snapshot:
        with self._lock:
            seen: dict[str, str] = {}
            cache = self._cache
            fresh_before = self._clock() - RACY_WINDOW_NS
            for rel, st in self._walk():
                digest = self._cached_digest(rel, st, fresh_before)
                if digest is not None:
                    seen[rel] = digest
            # Forget files that vanished so the cache does not grow without bound over a session.
            if len(cache) != len(seen):
                for rel in [r for r in cache if r not in seen]:
                    del cache[rel]
            snap = Snapshot(seen)
            self.last = snap
            return snap

    # --- the kernel's change set (live.py) ------------------------------------------------------

    def _want_watch(self) -> None:
        if os.environ.get("CERVEAU_FINGERPRINT", "").strip().lower() == "walk":
            self.reason = "CERVEAU_FINGERPRINT=walk"
            return
        if not watch.QUIET_DIRS <= self.ignore_dirs:  # those are watched for names only
            self.reason = "the ignored folders differ from the watch's quiet ones"
            return
        tw = watch.acquire(self._root_s)
        if tw.failed is not None:
            self.reason = tw.failed
            watch.release(tw)
            return
        self._watch = tw
        self._finalizer = weakref.finalize(self, watch.release, tw)

    def _first(self, progress: Callable[[str, float | None, str], object] | None) -> None:
        t0 = time.monotonic()
        # The lines are handed to a thread of their own: the callback may wait (a bus's lock held
        # by a subscriber that waits on this very build, as a turn's first restore point does),
        # and the build must never wait on the one who waits for it.
        lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()

        def deliver() -> None:
            while (line := lines.get()) is not None:
                try:
                    if progress is not None:
                        progress("workspace", None, line)
                except Exception:
                    pass
            self._told.set()

        if progress is not None:
            threading.Thread(target=deliver, name="fingerprint-progress", daemon=True).start()
        else:
            self._told.set()

        def say(line: str) -> None:
            if progress is not None:
                lines.put(line)

        try:
            with self._lock:
                self._build(lambda n: say(f"indexing the workspace: {n:,} files"))
                snap = self.last if self._live is not None else self._walk_scan()
            n = len(snap) if snap is not None else 0
            if n >= PROGRESS_FILES:  # a small tree says nothing: it was ready at once
                took = time.monotonic() - t0
                say(f"workspace indexed: {n:,} files in {took:.1f} s ({self.method})")
        finally:
            self._ready.set()
            lines.put(None)

    def _build(self, on_files: Callable[[int], None] | None = None) -> None:
        """Watches on every folder, then one walk; from then on scans read the change set."""
        tw = self._watch
        if tw is None or self._live is not None:
            return
        if not tw.ready:
            tw.register_all()
        if tw.failed is not None:
            self._stop_watch(tw.failed)
            return
        live = LiveTree(self, tw)
        live.build(on_files)
        self._live = live
        self.method, self.reason = "inotify", None
        self._live_snapshot(live)

    def _live_snapshot(self, live: LiveTree) -> Snapshot:
        """The next Snapshot from the live tree: only the folders that changed are digested again."""
        if not live.sync() and self.last is not None and self.last._lineage is not None:
            return self.last
        changed, everything = live.changed, live.everything
        live.changed, live.everything = set(), False
        # Only the folders that changed are rebuilt: their digest, their bucket's digest; the
        # snapshot holds every folder's mapping as the live tree has it (shared, never copied).
        dirs, dds, buckets = self._snap_dirs, self._dir_digests, self._buckets
        todo = list(live.dirs) if everything else {p.rpartition("/")[0] for p in changed}
        if everything:  # the first walk: from nothing
            for held in (dirs, dds, buckets, self._bucket_digests):
                held.clear()
        touched: set[int] = set()
        for d in todo:
            b = bucket_of(d)
            inner = live.dirs.get(d)
            if inner:
                dirs[d] = inner
                dds[d] = dir_digest([(r.rpartition("/")[2], v) for r, v in inner.items()])
                buckets.setdefault(b, set()).add(d)
            else:
                dirs.pop(d, None)
                dds.pop(d, None)
                if inner is not None and d not in live.dir_specs:
                    del live.dirs[d]  # a folder gone (an empty one walked keeps its place)
                buckets.get(b, set()).discard(d)
            touched.add(b)
        live.shared()
        for b in touched:
            members = buckets.get(b)
            if members:
                self._bucket_digests[b] = bucket_digest({d: dds[d] for d in members})
            else:
                buckets.pop(b, None)
                self._bucket_digests.pop(b, None)
        digest = top_digest(self._bucket_digests)
        # The first snapshot's change set is "everything": journalled as unknown (a diff across it
        # compares the snapshots), not as a set of every path.
        gen = self._journal.add(None if everything else frozenset(changed))
        snap = Snapshot(
            _dirs=dict(dirs), _len=live.count, _digest=digest, _lineage=(self._journal, gen)
        )
        self.last = snap
        return snap

    def _stop_watch(self, why: str) -> None:
        self._live = None
        self.method, self.reason = "walk", why
        tw, self._watch = self._watch, None
        if tw is not None:
            self._finalizer.detach()
            watch.release(tw)

    def hash_file(self, rel_path: str) -> str | None:
        """Digest of one file (warm-cache aware); None if it is missing or not a file."""
        rel = rel_path.replace(os.sep, "/").lstrip("/")
        while rel.startswith("./"):
            rel = rel[2:]
        if self._live is not None and self._ready.is_set():
            with self._lock:  # the change set answers for a tracked file: no stat, no read
                live = self._live
                if live is not None:
                    try:
                        live.sync()
                    except Exception as exc:
                        self._stop_watch(str(exc) or type(exc).__name__)
                    else:
                        known = live.get(rel)
                        if known is not None:
                            return known
        try:
            st = os.lstat(os.path.join(self._root_s, rel))
        except (FileNotFoundError, NotADirectoryError):
            with self._lock:
                self._cache.pop(rel, None)
            return None
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            return None
        if not self._lock.acquire(blocking=self._ready.is_set()):
            # The first snapshot is being built (it holds the lock): read this one file without
            # the cache rather than wait for the whole tree.
            try:
                if stat.S_ISLNK(st.st_mode):
                    return hash_bytes(b"symlink\0" + os.fsencode(os.readlink(self.root / rel)))
                return self._hasher(self.root / rel, st.st_size)
            except (FileNotFoundError, NotADirectoryError):
                return None
        try:
            return self._digest_for(rel, st)
        finally:
            self._lock.release()

    def changed_since(self, prev: Mapping[str, str] | PendingScan) -> list[str]:
        if isinstance(prev, PendingScan):
            prev = prev.resolve()
        return diff_snapshots(prev, self.scan())

    def scan_soon(self) -> Snapshot | PendingScan:
        """`scan()` now when the first snapshot is built; else a PendingScan that `settle()`
        (before a turn's first call) or its first use resolves: the first prompt does not wait
        for a large tree's first walk, and nothing the turn does can precede the snapshot."""
        if self._ready.is_set():
            return self.scan()
        pending = PendingScan(self)
        with self._pending_lock:
            self._pending.append(pending)
        return pending

    def digest_soon(self) -> str:
        """`scan().digest`, or while the first snapshot is built a token no digest equals, whose
        scan `settle()` takes before the turn's first call (the progress guard's baseline: the
        first iteration of a session on a large tree then counts as a change, once)."""
        if self._ready.is_set():
            return self.scan().digest
        self.scan_soon()
        return f"pending:{id(self)}"

    def settle(self) -> None:
        """Resolve every PendingScan (waits for the first snapshot if it must)."""
        with self._pending_lock:
            pending, self._pending = self._pending, []
        for p in pending:
            p.resolve()


class PendingScan:
    """A scan asked for before the first snapshot was built (Fingerprinter.scan_soon)."""

    def __init__(self, fp: Fingerprinter) -> None:
        self._fp = fp
        self._snap: Snapshot | None = None
        self._lock = threading.Lock()

    def resolve(self) -> Snapshot:
        with self._lock:
            if self._snap is None:
                self._snap = self._fp.scan()
            return self._snap
