"""The session's handle on the search index (search_index.py says what it is, search_index_build
what builds it): loaded and checked against the fingerprint after its first walk, kept current
from the fingerprint's change lists, rebuilt by a child process when too much of it went stale,
and the one question a search asks of it (`narrow`). Nothing here blocks the first prompt, and
whenever it cannot say, search reads every file.
"""

from __future__ import annotations

import atexit
import os
import struct
import threading
import weakref
from pathlib import Path
from typing import Any

from .. import host_process
from ..state_home import state_path
from ..workspace.snapshot import diff_snapshots
from . import ripgrep, search_index_build
from .base import ToolContext
from .search_index import need_bits
from .search_index_file import LoadedIndex

INDEX_NAME = "search-index.bin"
#: `CERVEAU_SEARCH_INDEX=off`: no index (the benchmarks' "before"; search reads every file).
INDEX_ENV = "CERVEAU_SEARCH_INDEX"
#: Below this many files rg reads the whole tree in tens of milliseconds: no index is built
#: (nor a process started, nor a file written) for it.
MIN_FILES = 5_000
#: An index of fewer files than this share of the fingerprint's (a build cut short) is completed.
COVERED_SHARE = 0.9
#: When this share of the indexed files changed since, a rebuild is asked for.
STALE_SHARE = 0.05


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
        self._proc: host_process.Popen[bytes] | None = None
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
            stale = self._stale(idx)
        if stale:
            self.start()
        return idx

    def _wants_new(self, idx: LoadedIndex | None) -> bool:
        """None held, one of part of the tree (a build cut short), or one gone stale."""
        files = len(self.fp.last) if self.fp is not None and self.fp.last is not None else 0
        return idx is None or idx.n < files * COVERED_SHARE or self._stale(idx)

    @staticmethod
    def _stale(idx: LoadedIndex) -> bool:
        return idx.n - idx.valid.count(1) > max(200, idx.n * STALE_SHARE)

    def _build(self) -> None:
        fp = self.fp
        if fp is not None:
            fp.wait_ready()  # the first prompt's fingerprint walk is not slowed down by this one
            if fp.last is None or len(fp.last) < self.min_files or self.closed:
                return
            if fp.method == "inotify" and self.file.exists():
                idx = self.current(fp.scan(), load=True)  # the last session's, checked
                if not self._wants_new(idx):
                    return  # usable as it is: no process, no rewrite (a search asks if stale)
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            # python_argv from "/", not `python -m` from our cwd: started from the workspace,
            # `-m` imported a `subprocess.py` the model wrote there and ran it on the host.
            argv = host_process.python_argv(
                search_index_build.__name__, str(self.workspace), str(self.file), *self.deny
            )
            with host_process.spawn(argv, stderr=host_process.PIPE, inherit=_CHILD_ENV) as p:
                self._proc = p
                if self.closed:
                    p.kill()
                _, err = p.communicate(timeout=3600)
            self.builds += 1
            self.last_error = err.decode("utf-8", "replace")[-300:] or None
            if fp is not None and fp.method == "inotify" and not self.closed:
                if self._wants_new(self.loaded):  # else the one held stays: it is exact
                    self.current(fp.scan(), load=True)  # loaded and checked here, not in a search
        except (OSError, host_process.SubprocessError) as exc:
            self.last_error = str(exc)


#: The person's config location: the child seals the index with the person's key. (PYTHONPATH
#: is no longer passed: python_argv finds the package where we did, and `-I` would ignore it.)
_CHILD_ENV = ("HOME", "CERVEAU_CONFIG", "XDG_CONFIG_HOME", "XDG_STATE_HOME")


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
