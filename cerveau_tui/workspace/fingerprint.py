"""The workspace fingerprint: one digest that changes exactly when a tracked file's bytes change.

Progress detection ("has the artifact changed in eight iterations?") and plan checkpoints both ask
this question after every iteration, so it must be cheap when nothing changed. Hashing is cheap
(blake3 reads ~4 GB/s); walking and reading are not. So a stat cache keyed by (size, mtime_ns,
inode) skips every file whose metadata is unchanged, and only what changed is read and hashed.

The digest of a file is blake3 of its bytes, the same key the blob store uses, so a checkpoint hash
can be looked up in the store to restore that version.
"""

from __future__ import annotations

import errno
import mmap
import os
import queue
import stat
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import blake3
import pathspec

from ..state_file import read_regular
from .live import PendingScan
from .rules import RACY_WINDOW_NS, _ignored
from .snapshot import Snapshot, _Journal, diff_snapshots

DEFAULT_IGNORE_DIRS = (".git", ".cerveau", ".venv", "node_modules", "__pycache__")
LARGE_FILE = 1 << 20  # from here mmap + blake3's own threads beat a read() into Python bytes

# RACY_WINDOW_NS (rules.py): a file hashed within it of its mtime is hashed again ("racily clean").
PROGRESS_FILES = 5000  # the first build says its progress every this many files
GITIGNORE_MAX = 1_000_000  # a .gitignore bigger than this is not read (as walk.py)
RESTATED_KEEP = 1 << 16  # paths stat'ed anew that restated_since remembers


@dataclass(frozen=True, slots=True)
class _Entry:
    """One file of the stat cache (100,000 of them on a big tree: slots, and no more than the
    check needs; a per-instance __dict__ and the hashing time as an int were 13 MB there)."""

    size: int
    mtime_ns: int
    ino: int
    digest: str
    # Hashed safely after its last write (mtime older than the racy window when it was read).
    # The check "mtime < hashed_at - RACY_WINDOW_NS" needs no more: mtime must match to serve.
    clean: bool
    mode: int = 0  # st_mode as last stat'ed (a chmod moves no digest): mode_of reads it


#: One int object per distinct st_mode (a handful in a tree), shared by every entry.
_MODES: dict[int, int] = {}


def hash_bytes(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


def hash_path(path: Path, size: int | None = None) -> str:
    """blake3 of a regular file's bytes; large files are mmapped and hashed on several threads.

    Opened without blocking and without following a final link, then checked to be a regular
    file: between the caller's lstat and this open, a command can swap in a FIFO (a plain open
    blocked the engine thread for good, outside the sandbox) or a link to the person's files.
    OSError for anything but a regular file; `size` is taken from the open file, not trusted."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if st.st_size >= LARGE_FILE:
            try:
                with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as mm:
                    h = blake3.blake3(max_threads=blake3.blake3.AUTO)
                    h.update(mm)
                    return h.hexdigest()
            except ValueError:  # emptied since the fstat: read what is there
                pass
        h = blake3.blake3()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest()
    finally:
        os.close(fd)


class Fingerprinter:
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
        self.root = Path(os.path.realpath(root))
        self._root_s = str(self.root)
        self.ignore_dirs = frozenset(ignore_dirs)
        self._clock = clock
        self._hasher = hasher
        self._cache: dict[str, _Entry] = {}
        self._specs: dict[str, tuple[int, int, pathspec.GitIgnoreSpec | None]] = {}
        self._lock = threading.RLock()
        self.hash_count = 0  # files actually read and hashed; tests and benchmarks watch it
        self.last: Snapshot | None = None
        self._journal = _Journal()
        self._dir_digests: dict[str, str] = {}  # the live fingerprint's folders (_live_scan)
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
        #: Every path stat'ed anew (_digest_for), oldest first, from number `_restated_base`:
        #: what restated_since reads (a chmod moves no digest, so no snapshot diff shows it).
        self._restated: list[str] = []
        self._restated_base = 0
        self._live: Any = None  # live.LiveTree while the watch is exact
        self._watch: Any = None  # watch.TreeWatch
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

    def status(self) -> dict[str, Any]:
        """What doctor says: {"method": "inotify"|"walk", "reason", "watches", "ready", "files"}."""
        tw = self._watch
        return {
            "method": self.method,
            "reason": self.reason,
            "watches": tw.watches if tw is not None else 0,
            "ready": self._ready.is_set(),
            "files": len(self.last) if self.last is not None else None,
        }

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
                    return self._live_scan()
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
        from . import watch

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
        from .live import LiveTree

        if not tw.ready:
            tw.register_all()
        if tw.failed is not None:
            self._stop_watch(tw.failed)
            return
        live = LiveTree(self, tw)
        live.build(on_files)
        self._live = live
        self.method, self.reason = "inotify", None
        self._live_scan()

    def _live_scan(self) -> Snapshot:
        from .live import take_snapshot

        return take_snapshot(self)

    def _stop_watch(self, why: str) -> None:
        from . import watch

        self._live = None
        self.method, self.reason = "walk", why
        tw, self._watch = self._watch, None
        if tw is not None:
            self._finalizer.detach()
            watch.release(tw)

    def restated_mark(self) -> int:
        """A position in the record of paths stat'ed anew, for restated_since."""
        with self._lock:
            return self._restated_base + len(self._restated)

    def restated_since(self, mark: int) -> set[str] | None:
        """Paths stat'ed anew (their digest or mode may have moved) since `mark`; None when that
        is no longer known (too many since). Read-only: a restore point's O(changed) path."""
        with self._lock:
            if mark < self._restated_base:
                return None
            return set(self._restated[mark - self._restated_base :])

    def mode_of(self, rel: str) -> int | None:
        """st_mode of a tracked file as the last scan saw it (None: not known). Read-only: a
        restore point takes its modes here instead of one lstat per file (a chmod re-stats, and
        re-reads, only that file: the walk compares the mode, the watch hears IN_ATTRIB)."""
        e = self._cache.get(rel)
        return e.mode if e is not None and e.mode else None

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

    # --- internals ------------------------------------------------------------------------------

    def _digest_for(self, rel: str, st: os.stat_result) -> str | None:
        cached = self._cache.get(rel)
        if (
            cached is not None
            and cached.size == st.st_size
            and cached.mtime_ns == st.st_mtime_ns
            and cached.ino == st.st_ino
            and cached.mode == st.st_mode
            and cached.clean
        ):
            return cached.digest
        now = self._clock()  # taken before reading: a write during the read counts as racy
        path = Path(self._root_s, rel)
        try:
            if stat.S_ISLNK(st.st_mode):
                digest = hash_bytes(b"symlink\0" + os.fsencode(os.readlink(path)))
            else:
                digest = self._hasher(path, st.st_size)
        except (FileNotFoundError, NotADirectoryError):
            self._cache.pop(rel, None)
            return None
        except OSError:
            # Unreadable (permissions, a FIFO swapped in): fingerprint the metadata so a change is
            # still seen, rather than failing the whole scan on one file.
            digest = hash_bytes(f"unreadable\0{st.st_size}\0{st.st_mtime_ns}".encode())
        self.hash_count += 1
        clean = st.st_mtime_ns < now - RACY_WINDOW_NS
        mode = _MODES.setdefault(st.st_mode, st.st_mode)
        self._cache[rel] = _Entry(st.st_size, st.st_mtime_ns, st.st_ino, digest, clean, mode)
        self._restated.append(rel)
        if len(self._restated) > RESTATED_KEEP:
            cut = RESTATED_KEEP // 2
            del self._restated[:cut]
            self._restated_base += cut
        return digest

    def _spec_for(self, dir_abs: str, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        gi = os.path.join(dir_abs, ".gitignore")
        try:
            st = os.stat(gi)
        except OSError:
            self._specs.pop(rel_dir, None)
            return None
        cached = self._specs.get(rel_dir)
        if cached is not None and cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
            return cached[2]
        # Not a plain open(): a FIFO named .gitignore in any folder blocked the scan after every
        # command, forever; a link to /dev/zero read without end. Regular files only, bounded,
        # not through a link (git does not follow a linked .gitignore either).
        try:
            text = read_regular(gi, GITIGNORE_MAX, follow_links=False).decode("utf-8", "replace")
            spec: pathspec.GitIgnoreSpec | None = pathspec.GitIgnoreSpec.from_lines(
                text.splitlines()
            )
        except OSError:
            spec = None
        self._specs[rel_dir] = (st.st_mtime_ns, st.st_size, spec)
        return spec

    def _cached_digest(self, rel: str, st: os.stat_result, fresh_before: int) -> str | None:
        """The warm path: same size, mtime and inode, hashed safely after the last write, is the
        cached digest; anything else is read and hashed (None: not a file to fingerprint)."""
        c = self._cache.get(rel)
        if (
            c is not None
            and c.mtime_ns == st.st_mtime_ns
            and c.size == st.st_size
            and c.ino == st.st_ino
            and c.mode == st.st_mode
            and c.clean
            and st.st_mtime_ns < fresh_before
        ):
            return c.digest
        return self._digest_for(rel, st)

    def _walk(
        self,
        top: str = "",
        specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = (),
        on_dir: Callable[[str, tuple[tuple[str, pathspec.GitIgnoreSpec], ...]], None] | None = None,
    ) -> Iterator[tuple[str, os.stat_result]]:
        """Every tracked file (regular or link) under `top` with its lstat; `on_dir` is told each
        folder walked and the rules in force there (the live tree records them)."""
        # Each level carries the .gitignore specs in force: (directory they live in, spec). A
        # nested .gitignore's patterns are relative to its own directory, as git reads them.
        stack: list[tuple[str, str, tuple[tuple[str, pathspec.GitIgnoreSpec], ...]]] = [
            (os.path.join(self._root_s, top) if top else self._root_s, top, specs)
        ]
        while stack:
            dir_abs, rel_dir, specs = stack.pop()
            spec = self._spec_for(dir_abs, rel_dir)
            if spec is not None:
                specs = (*specs, (rel_dir, spec))
            if on_dir is not None:
                on_dir(rel_dir, specs)
            try:
                entries = list(os.scandir(dir_abs))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                rel = f"{rel_dir}/{name}" if rel_dir else name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if name in self.ignore_dirs or _ignored(specs, rel, True):
                        continue
                    stack.append((entry.path, rel, specs))
                    continue
                if specs and _ignored(specs, rel, False):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                    yield rel, st
