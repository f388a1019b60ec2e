"""What a grant may make writable: only where people keep files, never the harness's own.

Found by trying the approval dialog: a command refused a write to /proc/sys/vm/swappiness was
offered "more room" there, and the room was a writable bind of the host's /proc/sys file, which a
root session's command could then use to set kernel.core_pattern. So the room is judged by what
the path IS (the type of the filesystem it lives on, from the mount table, and every mount a bind
of it would carry along), not by a list of names; the runners drop such a grant and the policy
never offers it.
"""

from __future__ import annotations

import os
from pathlib import Path

from .view import _under, control_paths, runtime_paths

#: Filesystems a grant ("rerun with more room", a session grant) may make writable: where people
#: keep files. Not on it, so never grantable: the kernel's interfaces (proc, sysfs, cgroup,
#: devtmpfs, securityfs, debugfs, bpf, ...).
GRANTABLE_FS = frozenset(
    {
        "ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs", "jfs", "bcachefs", "reiserfs",
        "tmpfs", "overlay", "nfs", "nfs4", "cifs", "smb3", "9p", "virtiofs", "vfat", "exfat",
        "ntfs", "ntfs3", "fuseblk", "hfsplus",
    }
)  # fmt: skip


def _unescape(field: str) -> str:
    return field.encode().decode("unicode_escape") if "\\" in field else field


def _mounts() -> list[tuple[Path, str]]:
    """(mount point, filesystem type) of every mount this process sees."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    out: list[tuple[Path, str]] = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if sep and len(fields) >= 5 and right:
            out.append((Path(_unescape(fields[4])), right.split()[0]))
    return out


def filesystem_of(path: Path) -> str:
    """The type of the filesystem `path` (a realpath) lives on: the mount with the longest mount
    point holding it. "" when unknown."""
    best, kind = -1, ""
    for point, fs in _mounts():
        if _under(path, point) and len(point.parts) > best:
            best, kind = len(point.parts), fs
    return kind


def _grantable_fs(kind: str) -> bool:
    return kind in GRANTABLE_FS or kind.startswith("fuse.")


def grant_refusal(path: Path) -> str | None:
    """Why `path` can never be made writable for a command, or None. By construction, in the
    runners (a grant is dropped) and in the policy (it is never offered)."""
    real = Path(os.path.realpath(path))
    if real == Path("/"):
        return "/ is the whole machine"
    for own in (*control_paths(), *runtime_paths()):
        if _under(real, own) or _under(own, real):
            return f"{real} holds the harness's own files ({own})"
    kind = filesystem_of(real)
    if not _grantable_fs(kind):
        return f"{real} is on {kind or 'an unknown filesystem'}, not a place files are kept"
    # A bind is recursive: a folder holding a kernel interface's mount (/sys/fs holds cgroup2)
    # would make that writable too.
    for point, fs in _mounts():
        if point != real and _under(point, real) and not _grantable_fs(fs):
            return f"{real} holds {point} ({fs}), a kernel interface"
    return None
