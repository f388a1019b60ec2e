"""Building the search index (search_index.py) in a process of its own, and the session's handle.

Reading and signing 370 MB of a 100,000-file tree takes ~30 s of one core: in the harness it
would hold the interpreter lock against the turn and add its buffers to the harness's memory,
so it is a child process (`python -m cerveau_tui.tools.search_index_build WS OUT`), niced, that
the session starts at its start and never waits for: until it is done, `search` reads every
file as before. The index is kept in the session's state folder (state_home) and outlives the
session: records are keyed by content, so an old index is exactly as safe as a new one (a file
changed since reads as "changed", see exclusions), and a rebuild reads only the files whose
size, mtime, inode or ctime moved.

The folders are rg's own (`rg --files`, with the search's rules): a folder rg skips (ignored)
is not recorded, so its parent is never set aside whole.
"""

from __future__ import annotations

import atexit
import os
import stat
import struct
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import blake3

from ..sandbox.process import minimal_env
from ..state_home import state_path
from ..workspace.snapshot import diff_snapshots
from . import ripgrep
from .base import ToolContext
from .search_index import LARGE, LARGE_BYTES, UNREADABLE, Signer, flags_of, need_bits
from .search_index_file import FileRecord, FolderRecord, LoadedIndex, read_index, write_index
from .walk import SKIP_DIRS

INDEX_NAME = "search-index.bin"
#: A folder changed this recently may change again within its ctime's tick unseen: not trusted.
RACY_NS = 2_000_000_000
#: Past this many files the index is not built (search reads every file, as without it).
MAX_FILES = 1_000_000
#: How often a build writes what it has done so far.
SAVE_EVERY_S = 5.0
#: `CERVEAU_SEARCH_INDEX=off`: no index (the benchmarks' "before"; search reads every file).
INDEX_ENV = "CERVEAU_SEARCH_INDEX"
#: Below this many files rg reads the whole tree in tens of milliseconds: no index is built
#: (nor a process started, nor a file written) for it.
MIN_FILES = 5_000
#: When this share of the indexed files changed since, the next search asks for a rebuild.
STALE_SHARE = 0.05


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def rg_folders(rg: str, ws: Path) -> set[str] | None:
    """The folders holding a file rg would search (and their parents), relative; None on failure."""
    argv = [*ripgrep.common(rg, ws), "--files", "--", str(ws)]
    res = subprocess.run(argv, cwd=ws, env=minimal_env(ws), capture_output=True, timeout=600)
    if res.returncode not in (0, 1):
        return None
    prefix = os.fsencode(str(ws)) + b"/"
    out: set[str] = {""}
    n = 0
    for p in res.stdout.split(b"\x00"):
        if not p.startswith(prefix):
            continue
        n += 1
        d = os.fsdecode(p[len(prefix) :]).rpartition("/")[0]
        while d not in out:
            out.add(d)
            d = d.rpartition("/")[0]
    return out if n <= MAX_FILES else None


def build(
    ws: Path,
    folders: set[str],
    old_path: Path | None,
    out: Path,
    every_s: float = SAVE_EVERY_S,
    racy_ns: int = RACY_NS,
    deny: tuple[str, ...] = (),
) -> int:
    """Write the index of `folders` to `out`; how many files were read (the rest reused). What
    is done so far is written every `every_s` too: a session closed before the end (the build
    is killed with it) leaves an index of part of the tree, which the next one completes."""
    start = time.time_ns()
    saved = time.monotonic()
    old_dirs = {d.rel: d for d in read_index(old_path)} if old_path is not None else {}
    old = {rel: {f.name: f for f in d.files} for rel, d in old_dirs.items()}
    signer = Signer()
    ws_s = str(ws)
    records: list[FolderRecord] = []
    read = 0
    # A deny-read path (masked inside the sandbox) is never read nor signed: the index sits in
    # the state folder the sandbox shows, and a signature says which trigrams a file holds.
    denied = tuple(d.rstrip("/") for d in deny)

    def refused(path: str) -> bool:
        return any(path == d or path.startswith(d + "/") for d in denied)

    folders = {f for f in folders if not refused(os.path.join(ws_s, f) if f else ws_s)}
    order = sorted(folders, key=_deepest_first)
    for done, rel in enumerate(order, 1):
        here = os.path.join(ws_s, rel) if rel else ws_s
        try:
            ctime = os.lstat(here).st_ctime_ns  # moved by any entry made or gone, and by a utime
            entries = list(os.scandir(here))
        except OSError:
            continue
        d = FolderRecord(rel, ctime if ctime < start - racy_ns else -1, True)
        before = old.get(rel, {})
        for e in entries:
            sub = f"{rel}/{e.name}" if rel else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                d.clean = False
                continue
            if stat.S_ISDIR(st.st_mode):
                if e.name in SKIP_DIRS or sub in folders:
                    d.subdirs.append(e.name)
                else:
                    d.clean = False  # rg skips it (ignored, empty) or it is unknown: keep in
            elif stat.S_ISLNK(st.st_mode):
                continue  # rg follows no link and names none
            elif not stat.S_ISREG(st.st_mode) or refused(e.path):
                d.clean = False
            else:
                key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
                prev = before.get(e.name)
                if prev is not None and prev.stat_key == key:
                    d.files.append(prev)  # keyed by content: reused, it is still its own truth
                    continue
                d.files.append(_record(e.name, e.path, key, signer))
                read += 1
        records.append(d)
        if time.monotonic() - saved > every_s:
            # A part: the old index's records of the folders still to do, kept as they were.
            rest = [old_dirs[r] for r in order[done:] if r in old_dirs]
            write_index(out, sorted(records + rest, key=lambda d: _deepest_first(d.rel)))
            saved = time.monotonic()
    write_index(out, records)
    return read


def _deepest_first(rel: str) -> tuple[int, str]:
    return (-rel.count("/") - (rel != ""), rel)


def _record(name: str, path: str, key: tuple[int, int, int, int], signer: Signer) -> FileRecord:
    zero = bytes(32)
    if key[0] >= LARGE_BYTES:
        return FileRecord(name, zero, LARGE, b"", key)
    try:
        data = _read(path)
    except OSError:
        return FileRecord(name, zero, UNREADABLE, b"", key)
    flags = flags_of(data)
    sig = signer.sign(data).to_bytes(128, "little") if not flags else b"\xff" * 128
    return FileRecord(name, blake3.blake3(data).digest(), flags, sig, key)


def main(argv: list[str]) -> int:
    """`WS OUT [DENIED...]`: the workspace, the index file, the deny-read paths."""
    ws, out, deny = Path(os.path.realpath(argv[0])), Path(argv[1]), tuple(argv[2:])
    try:
        os.nice(10)
    except OSError:
        pass
    rg = ripgrep.find_rg()
    if rg is None:
        return 2
    folders = rg_folders(rg, ws)
    if folders is None:
        return 3
    build(ws, folders, out if out.exists() else None, out, deny=deny)
    return 0


class SearchIndex:
    """The session's index: loaded (and checked against the fingerprint) and rebuilt in the
    background after the fingerprint's first walk; until then, and whenever it cannot say,
    search reads every file."""

    def __init__(
        self,
        workspace: Path,
        fingerprinter: Any = None,
        min_files: int = MIN_FILES,
        deny: tuple[str, ...] = (),
    ) -> None:
        self.min_files = min_files
        self.deny = deny
        self.workspace = Path(os.path.realpath(workspace))
        self.file = state_path(self.workspace, INDEX_NAME)
        self.fp = fingerprinter
        self._lock = threading.Lock()  # one search at a time refreshes `loaded`
        self._building: threading.Thread | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self.loaded: LoadedIndex | None = None
        self._loaded_id: tuple[int, int] | None = None
        self.builds = 0
        self.last_error: str | None = None
        self.closed = False

    def start(self) -> None:
        with self._lock:
            if self.closed or (self._building is not None and self._building.is_alive()):
                return
            t = threading.Thread(target=self._build, name="cerveau-search-index", daemon=True)
            self._building = t
            t.start()

    def wait(self, timeout: float | None = None) -> bool:
        t = self._building
        if t is not None:
            t.join(timeout)
        return t is None or not t.is_alive()

    def stop(self) -> None:
        """The build's process, killed (the session closes: it never outlives the harness)."""
        self.closed = True
        p = self._proc
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        with self._lock:
            if self.loaded is not None:
                self.loaded.close()
                self.loaded = None

    def current(self, snapshot: Any, *, load: bool = False) -> LoadedIndex | None:
        """The index brought up to `snapshot` (the fingerprint now). A newer file is loaded and
        checked file by file (0.3 s at 100,000 files) by the build's thread when it is done
        (`load`), or here when none is held yet; the one held is kept current from the
        snapshots' change lists, and stays exact while a newer one is being written."""
        with self._lock:
            idx = self.loaded
        try:
            st = os.stat(self.file)
        except OSError:
            st = None
        ident = (st.st_ino, st.st_mtime_ns) if st is not None else None
        if ident is not None and ident != self._loaded_id and (load or idx is None):
            try:
                fresh = LoadedIndex(self.file)
                fresh.refresh(snapshot, None)
            except (OSError, ValueError, struct.error):
                fresh = None  # torn or foreign: the one held (if any) is still exact
            if fresh is not None:
                with self._lock:
                    old, self.loaded, self._loaded_id = self.loaded, fresh, ident
                if old is not None:
                    old.close()
        with self._lock:
            idx = self.loaded
            if idx is None:
                return None
            if idx.seen is not snapshot:
                idx.refresh(snapshot, diff_snapshots(idx.seen or {}, snapshot))
            stale = idx.n - idx.valid.count(1)
        if stale > max(200, idx.n * STALE_SHARE):
            self.start()
        return idx

    def _build(self) -> None:
        fp = self.fp
        if fp is not None:
            fp.wait_ready()  # the first prompt's fingerprint walk is not slowed down by this one
            if fp.last is None or len(fp.last) < self.min_files or self.closed:
                return
            if fp.method == "inotify" and self.file.exists():
                self.current(fp.scan(), load=True)  # the last session's, checked: usable now
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            argv = [sys.executable, "-m", __name__, str(self.workspace), str(self.file)]
            argv += list(self.deny)
            with subprocess.Popen(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_child_env()
            ) as p:
                self._proc = p
                if self.closed:
                    p.kill()
                _, err = p.communicate(timeout=3600)
            self.builds += 1
            self.last_error = err.decode("utf-8", "replace")[-300:] or None
            if fp is not None and fp.method == "inotify" and not self.closed:
                self.current(fp.scan(), load=True)  # loaded and checked here, not in a search
        except (OSError, subprocess.SubprocessError) as exc:
            self.last_error = str(exc)


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "PYTHONPATH", "HOME")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


_SESSIONS: weakref.WeakKeyDictionary[Any, SearchIndex] = weakref.WeakKeyDictionary()


def attach(fingerprinter: Any, workspace: Path, deny: list[Path] | None = None) -> SearchIndex:
    """Start the index of the session whose fingerprint is `fingerprinter` (search finds it by
    that key: ToolContext.fingerprinter), unless rg is absent or the engine forced built-in.
    `deny`: the deny-read paths (boundary.denied_reads), never indexed."""
    idx = SearchIndex(workspace, fingerprinter, deny=tuple(str(p) for p in deny or ()))
    if os.environ.get(INDEX_ENV, "").strip().lower() in ("off", "0", "no"):
        return idx
    _SESSIONS[fingerprinter] = idx
    _LIVE.add(idx)
    if ripgrep.find_rg() is not None:
        idx.start()
    return idx


_LIVE: weakref.WeakSet[SearchIndex] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for idx in list(_LIVE):
        idx.stop()


def detach(fingerprinter: Any) -> None:
    """The session closes: its build stopped, its index let go."""
    idx = _SESSIONS.pop(fingerprinter, None)
    if idx is not None:
        idx.stop()


def for_fingerprinter(fingerprinter: Any) -> SearchIndex | None:
    return _SESSIONS.get(fingerprinter) if fingerprinter is not None else None


def narrow(pattern: str, ctx: ToolContext, ws: Path, root: Path) -> tuple[list[str] | None, int]:
    """The exclusion lines for one search and how many files they set aside; (None, 0) when the
    index cannot say: none built yet, no literal in the pattern, or a fingerprint that is not
    kept by the kernel (its scan would be a walk: slower than what it saves)."""
    fp = ctx.fingerprinter
    idx = for_fingerprinter(fp)
    if fp is None or idx is None or fp.method != "inotify" or not fp.wait_ready(0):
        return None, 0
    need = need_bits(pattern)
    under = os.path.relpath(root, ws)
    if not need or under.startswith(".."):
        return None, 0
    # The fingerprint as of now: a file a command (or anything else) changed since the last
    # snapshot has a digest the index does not hold, and rg reads it.
    try:
        loaded = idx.current(fp.scan())
        if loaded is None:
            return None, 0
        res = loaded.exclusions(need, ws, "" if under == "." else under)
    except (OSError, ValueError, struct.error):  # closed with the session, torn: rg reads all
        return None, 0
    return res.lines or None, res.files


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
