"""What the watch needs from the machine: libc's inotify calls, the filesystem a path is on,
the mounts under a folder, the watch limit. No state of its own."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator

# Filesystems whose changes all happen in this kernel (inotify sees every write). Anything else
# (nfs, cifs, fuse.*, 9p, virtiofs, ...) may change from elsewhere without an event.
LOCAL_FS = frozenset(
    "ext2 ext3 ext4 xfs btrfs tmpfs overlay zfs f2fs jfs reiserfs bcachefs ramfs".split()
)


class _Libc:
    def __init__(self) -> None:
        # CDLL(None): the interpreter's own symbols, libc's among them. Not find_library("c"):
        # it runs `ldconfig -p`, and where that does not list libc, `gcc`/`cc`/`ld`/`objdump`
        # found on our PATH (`.` or the workspace on it: the model's program, on the host).
        lib = ctypes.CDLL(None, use_errno=True)
        self.init1 = lib.inotify_init1
        self.init1.argtypes, self.init1.restype = [ctypes.c_int], ctypes.c_int
        self.add = lib.inotify_add_watch
        self.add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.add.restype = ctypes.c_int
        self.rm = lib.inotify_rm_watch
        self.rm.argtypes, self.rm.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int


_LIBC: _Libc | None = None


def _libc() -> _Libc:
    global _LIBC
    if _LIBC is None:
        _LIBC = _Libc()
    return _LIBC


def _mounts() -> Iterator[tuple[str, list[str], str]]:
    """Each line of /proc/self/mountinfo: (mount point, the fields before " - ", its type)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) >= 5 and right:
            yield fields[4].replace("\\040", " "), fields, right.split()[0]


def fs_type(path: str) -> str:
    """The filesystem type of the mount holding `path` (/proc/self/mountinfo), "" if unknown."""
    best, kind = "", ""
    for mnt, _, fs in _mounts():
        inside = path == mnt or path.startswith(mnt.rstrip("/") + "/")
        if inside and len(mnt) >= len(best):
            best, kind = mnt, fs
    return kind


def mounts_under(root: str) -> frozenset[tuple[str, str]]:
    """(mount point, filesystem type) of every mount strictly inside `root`, and root's own."""
    inside = root.rstrip("/") + "/"
    return frozenset(
        (mnt, f"{fields[2]} {fields[3]} {fs}")
        for mnt, fields, fs in _mounts()
        if mnt == root or mnt.startswith(inside)
    )


def max_user_watches() -> int | None:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None
