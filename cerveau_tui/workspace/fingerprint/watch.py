"""What changed in the workspace, from the kernel (inotify), so a round costs O(changed), not O(tree).

Before: every command walked the tree three times (the fingerprint before and after, the git
guard), 1.1-1.2 s per `bash` round on 100,000 files. Now one `TreeWatch` per workspace per process
keeps an inotify watch on every folder and a journal of what changed; the fingerprint and the git
guard each read the journal from their own cursor (`since`). A sync point (`since`) drains the
kernel's queue first: the command has returned, so every event it caused is already queued (they
are queued by the syscall that caused them), and what is read is exactly what happened.

Direct inotify (ctypes on libc), not `watchfiles`/Rust notify: notify's events cross a thread and
a debounce, so there is no "everything up to now" barrier, and its overflow (`Rescan`) and its
own watch bookkeeping are hidden; here each is ours to handle exactly:
- a folder created (or renamed in) gets its watch FIRST and is listed AFTER, and everything found
  in it is journalled: files written before the watch existed are still seen (`tree` record);
- a folder deleted or renamed out drops its watches and is journalled as a `tree` to re-read;
- IN_Q_OVERFLOW (the queue's max_queued_events is full): every folder is re-registered and an
  `all` record tells each reader to walk everything once (as exact as the walk, because it is it);
- the watch limit (fs.inotify.max_user_watches) or a workspace on a filesystem inotify cannot see
  into (NFS, FUSE, 9p: another machine's writes raise no event): `failed` says why, and readers
  go back to walking the whole tree (doctor says so).
Writes through a bind mount of the same filesystem (bubblewrap binds the workspace) raise events:
inotify watches inodes, not paths. A write through a hard link from outside the tree does not
(the event goes to the other name's folder): the fingerprint stats its files with several links
on every scan. A write through mmap is seen when the file is closed (IN_CLOSE_WRITE: the mapping
holds the file open, so that is when the command ends at the latest).

Every folder is watched, ignored ones too, because the git guard must see a `.git` appear at any
depth (a repository can hide in node_modules). The quiet folders (`QUIET_DIRS`: node_modules,
.venv, __pycache__, .cerveau) are watched for names only (created, deleted, renamed, mode), so an
`npm install` queues no content events; the fingerprint never reads what happens in them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import select
import stat
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .watch_env import LOCAL_FS, _libc, fs_type, max_user_watches, mounts_under

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

NAMES = IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF
NAMES |= IN_MOVE_SELF
FULL = NAMES | IN_MODIFY | IN_CLOSE_WRITE
QUIET_DIRS = frozenset({"node_modules", ".venv", "__pycache__", ".cerveau"})
JOURNAL_MAX = 200_000  # records kept; a reader further behind walks everything once
_EVENT = struct.Struct("iIII")


@dataclass(frozen=True)
class Changes:
    """What a reader missed since its cursor: `paths` changed (re-stat each one), `trees` to read
    again whole (a folder that appeared, vanished or changed mode), `all`: walk everything."""

    paths: frozenset[str]
    trees: frozenset[str]
    all: bool
    cursor: int
    modes: frozenset[str] = frozenset()  # folders whose mode changed (the git guard's concern)

    def __bool__(self) -> bool:
        return bool(self.paths or self.trees or self.all)


class TreeWatch:
    """inotify on every folder under `root`, and a journal of what changed (see the module)."""

    def __init__(self, root: str, *, pump: bool = True) -> None:
        self.root = os.path.realpath(root)
        self.failed: str | None = None
        self.ready = False  # every folder has its watch (register_all returned)
        self._lock = threading.RLock()
        self._wd: dict[int, str] = {}
        self._dirs: dict[str, tuple[int, int]] = {}  # rel -> (wd, mode)
        self._log: list[tuple[str, str]] = []  # ("path"|"tree"|"mode"|"all", rel)
        self._pending: set[str] = set()  # folders to register from the disk (_settle)
        self._base = 0  # sequence number of _log[0]
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pump_enabled = pump
        self.fd = -1
        self._mountinfo_fd = -1
        self._mountinfo: select.poll | None = None
        self._mounts: frozenset[tuple[str, str]] = frozenset()
        kind = fs_type(self.root)
        if kind and kind not in LOCAL_FS and not kind.startswith("ext"):
            self.failed = f"the workspace is on {kind}, whose changes inotify may not see"
            return
        try:
            lib = _libc()
        except (OSError, AttributeError) as exc:
            self.failed = f"inotify is not available ({exc})"
            return
        fd = lib.init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            self.failed = f"inotify_init1 failed: {os.strerror(err)}"
            if err == errno.EMFILE:
                self.failed += " (fs.inotify.max_user_instances reached)"
            return
        self.fd = fd
        try:
            self._mountinfo_fd = os.open("/proc/self/mountinfo", os.O_RDONLY | os.O_CLOEXEC)
            while os.read(self._mountinfo_fd, 1 << 16):
                pass
            self._mounts = mounts_under(self.root)
            self._mountinfo = select.poll()
            self._mountinfo.register(self._mountinfo_fd, select.POLLPRI | select.POLLERR)
        except OSError:
            self._mountinfo = None

    # --- readers --------------------------------------------------------------------------------

    @property
    def healthy(self) -> bool:
        return self.failed is None and self.ready

    @property
    def watches(self) -> int:
        return len(self._dirs)

    def cursor(self) -> int:
        """Drain the kernel's queue; the sequence number of the next record."""
        with self._lock:
            self._mounts_moved()
            self._drain()
            return self._base + len(self._log)

    def since(self, cursor: int) -> Changes:
        """Everything journalled from `cursor` on (after draining the kernel's queue)."""
        with self._lock:
            self._mounts_moved()
            self._drain()
            end = self._base + len(self._log)
            if self.failed is not None or cursor < self._base:
                return Changes(frozenset(), frozenset(), True, end)
            paths, trees, modes, full = set(), set(), set(), False
            for kind, rel in self._log[cursor - self._base :]:
                if kind == "path":
                    paths.add(rel)
                elif kind == "tree":
                    trees.add(rel)
                elif kind == "mode":
                    trees.add(rel)
                    modes.add(rel)
                else:
                    full = True
            return Changes(frozenset(paths), frozenset(trees), full, end, frozenset(modes))

    # --- setup ------------------------------------------------------------------------------------

    def register_all(self, progress: Callable[[int], None] | None = None) -> None:
        """A watch on every folder (before it is listed); then the pump thread starts."""
        with self._lock:
            if self.fd < 0 or self.failed is not None:
                return
            self._register("", emit=False, progress=progress)
            if self.failed is None:
                self.ready = True
        if self._pump_enabled and self.failed is None and self._thread is None:
            self._thread = threading.Thread(target=self._pump, name="cerveau-watch", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self._lock:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1
            if self._mountinfo_fd >= 0:
                os.close(self._mountinfo_fd)
                self._mountinfo_fd = -1
                self._mountinfo = None
            self._wd.clear()
            self._dirs.clear()

    # --- internals ------------------------------------------------------------------------------

    def _fail(self, why: str) -> None:
        if self.failed is None:
            self.failed = why
        self._stop.set()

    def _mounts_moved(self) -> None:
        """A mount made or removed under the tree (a root command's `mount --bind`) hides what
        the watches see: inotify watches the covered folder, not what is mounted on it. The
        kernel flags /proc/self/mountinfo (POLLPRI) on every change of the mount table; then
        every folder is registered again (the mounted ones included) and readers walk once."""
        if self._mountinfo is None:
            return
        if not self._mountinfo.poll(0):
            return
        try:
            os.lseek(self._mountinfo_fd, 0, os.SEEK_SET)
            while os.read(self._mountinfo_fd, 1 << 16):
                pass  # reading it to the end re-arms the flag
        except OSError:
            pass
        mounts = mounts_under(self.root)
        if mounts == self._mounts:
            return  # a mount elsewhere on the machine
        self._mounts = mounts
        kind = fs_type(self.root)
        if kind and kind not in LOCAL_FS:
            self._fail(f"the workspace is now on {kind}, whose changes inotify may not see")
        if self.ready:
            self._unregister("")
            self._register("", emit=False)
        self._log.append(("all", ""))

    def _pump(self) -> None:
        """Keep the kernel's queue short between sync points (fewer overflows in a big build)."""
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while not self._stop.is_set():
            try:
                ready = poller.poll(200)
            except (OSError, ValueError):
                return
            if ready and not self._stop.is_set():
                with self._lock:
                    if self.fd >= 0:
                        self._drain()

    def _mask(self, rel: str) -> int:
        parts = rel.split("/") if rel else []
        if ".git" not in parts and any(p in QUIET_DIRS for p in parts):
            return NAMES | IN_ONLYDIR | IN_DONT_FOLLOW
        return FULL | IN_ONLYDIR | IN_DONT_FOLLOW

    def _register(
        self, top: str, *, emit: bool, progress: Callable[[int], None] | None = None
    ) -> None:
        """Watch `top` and every folder below it, each before it is listed; with `emit`,
        journal every entry found (they may have been written before the watch existed)."""
        lib = _libc()
        stack = [top]
        while stack and self.failed is None:
            rel = stack.pop()
            path = os.path.join(self.root, rel) if rel else self.root
            wd = lib.add(self.fd, os.fsencode(path), self._mask(rel))
            if wd < 0:
                err = ctypes.get_errno()
                if err == errno.ENOSPC:
                    limit = max_user_watches()
                    self._fail(
                        f"the inotify watch limit is reached (fs.inotify.max_user_watches="
                        f"{limit}; {len(self._dirs)} folders watched)"
                    )
                elif err == errno.ENOMEM:
                    self._fail("the kernel is out of memory for inotify watches")
                continue  # gone, not a folder any more, unreadable: its parent's events say so
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                mode = 0
            old = self._wd.get(wd)
            if old is not None and old != rel and old in self._dirs:
                # One folder at two places (a bind mount inside the tree): events name one.
                self._fail(f"the folder {rel or '.'} is also at {old or '.'} (a mount)")
                return
            self._wd[wd] = rel
            self._dirs[rel] = (wd, mode)
            if progress is not None and len(self._dirs) % 2000 == 0:
                progress(len(self._dirs))
            try:
                with os.scandir(path) as it:
                    entries = list(it)
            except OSError:
                continue
            for e in entries:
                child = f"{rel}/{e.name}" if rel else e.name
                if emit:
                    self._log.append(("path", child))
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(child)
                except OSError:
                    continue

    def _unregister(self, top: str) -> None:
        lib = _libc()
        prefix = top + "/"
        for rel in [r for r in self._dirs if r == top or r.startswith(prefix) or top == ""]:
            wd, _ = self._dirs.pop(rel)
            if self._wd.get(wd) == rel:
                del self._wd[wd]
                lib.rm(self.fd, wd)

    def _drain(self) -> None:
        if self.fd < 0:
            return
        while True:
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError as exc:
                self._fail(f"reading inotify failed: {exc}")
                break
            if not buf:
                break
            off = 0
            while off + _EVENT.size <= len(buf):
                wd, mask, _cookie, n = _EVENT.unpack_from(buf, off)
                name = buf[off + _EVENT.size : off + _EVENT.size + n].rstrip(b"\0")
                off += _EVENT.size + n
                self._event(wd, mask, os.fsdecode(name))
        if self._pending:
            self._settle()
        if len(self._log) > JOURNAL_MAX:
            cut = len(self._log) - JOURNAL_MAX // 2
            del self._log[:cut]
            self._base += cut

    def _event(self, wd: int, mask: int, name: str) -> None:
        log = self._log
        if mask & IN_Q_OVERFLOW:
            # Events were lost: folders made meanwhile have no watch. Register everything again
            # (add_watch on a watched folder is a no-op), then everyone walks once.
            self._unregister("")
            self._register("", emit=False)
            log.append(("all", ""))
            return
        base = self._wd.get(wd)
        if mask & IN_IGNORED:
            if base is not None:
                del self._wd[wd]
                if self._dirs.get(base, (None,))[0] == wd:
                    del self._dirs[base]
            return
        if base is None:
            return  # a watch already dropped (its folder moved out)
        rel = f"{base}/{name}" if base and name else (name or base)
        if not name:  # about the watched folder itself
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) and base == "":
                self._fail("the workspace folder itself was moved or deleted")
                log.append(("all", ""))
            elif mask & IN_ATTRIB:
                self._mode_changed(rel)
            return
        log.append(("path", rel))
        if not mask & IN_ISDIR:
            return
        if mask & (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE):
            # Whatever was watched under this name is not there any more (a rename exchange
            # swaps two folders with four events): drop it now, and register what is there at
            # the end of the batch (_settle), from the disk, not from the order of the events.
            self._unregister(rel)
            self._pending.add(rel)
            log.append(("tree", rel))
        elif mask & IN_ATTRIB:
            self._mode_changed(rel)

    def _settle(self) -> None:
        pending, self._pending = self._pending, set()
        for rel in sorted(pending, key=lambda r: (r.count("/"), r)):
            if rel in self._dirs or _split_parent(rel) not in self._dirs:
                continue  # registered with its parent already, or its parent is gone
            try:
                st = os.lstat(os.path.join(self.root, rel))
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                self._register(rel, emit=True)
                self._log.append(("tree", rel))

    def _mode_changed(self, rel: str) -> None:
        """A folder's attributes moved (chmod, touch): only a mode change can hide what is in it."""
        known = self._dirs.get(rel)
        try:
            mode = os.lstat(os.path.join(self.root, rel) if rel else self.root).st_mode
        except OSError:
            mode = 0
        if known is not None and known[1] == mode:
            return
        if known is not None:
            self._dirs[rel] = (known[0], mode)
        elif stat.S_ISDIR(mode):
            self._pending.add(rel)  # it had no watch (unreadable when it appeared): try again
        self._log.append(("mode", rel))


# --- one watch per workspace per process --------------------------------------------------------

_WATCHES: dict[str, tuple[TreeWatch, int]] = {}
_WATCHES_LOCK = threading.Lock()


def acquire(root: str) -> TreeWatch:
    """The process's watch of `root` (made on first use; its folders are registered by whoever
    calls register_all, the first fingerprint)."""
    root = os.path.realpath(root)
    with _WATCHES_LOCK:
        hit = _WATCHES.get(root)
        if hit is not None and hit[0].failed is None:
            _WATCHES[root] = (hit[0], hit[1] + 1)
            return hit[0]
        tw = TreeWatch(root)
        _WATCHES[root] = (tw, 1)
        return tw


def release(tw: TreeWatch) -> None:
    with _WATCHES_LOCK:
        hit = _WATCHES.get(tw.root)
        if hit is None or hit[0] is not tw:
            tw.close()
            return
        if hit[1] <= 1:
            del _WATCHES[tw.root]
            tw.close()
        else:
            _WATCHES[tw.root] = (tw, hit[1] - 1)


def current(root: str | os.PathLike[str]) -> TreeWatch | None:
    """The working watch of `root`, if a fingerprint holds one (the git guard's change set)."""
    with _WATCHES_LOCK:
        hit = _WATCHES.get(os.path.realpath(root))
    return hit[0] if hit is not None and hit[0].healthy else None


def _split_parent(rel: str) -> str:
    return rel.rpartition("/")[0]


def doctor_info(root: str | os.PathLike[str]) -> dict[str, object]:
    """What a session's fingerprint would use here, found by doing it: a watch on every folder
    (so a watch limit too low for this tree shows), then released."""
    reason: str | None
    if os.environ.get("CERVEAU_FINGERPRINT", "").strip().lower() == "walk":
        method, reason, watches = "walk", "CERVEAU_FINGERPRINT=walk", 0
    else:
        tw = TreeWatch(os.fspath(root), pump=False)
        tw.register_all()
        method = "inotify" if tw.healthy else "walk"
        reason, watches = tw.failed, tw.watches
        tw.close()
    return {
        "method": method,
        "reason": reason,
        "watches": watches,
        "max_user_watches": max_user_watches(),
        "filesystem": fs_type(os.path.realpath(root)) or None,
    }
