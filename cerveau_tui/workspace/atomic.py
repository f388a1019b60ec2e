"""Writing a file so that a reader sees the old content or the new one, never half of each.

A plain `open(path, "w")` truncates first: a write cut short (disk full, file-size limit, the
process killed mid-write) leaves the person's file empty or torn. Writing a temporary file beside
it, fsyncing it, and renaming it over the original makes the change all-or-nothing, because
rename within one directory is atomic on POSIX.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _read_umask() -> int:
    # os.umask can only be read by setting it, which races with other threads creating files;
    # Linux exposes it read-only in /proc, so prefer that and fall back once, at import.
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


_UMASK = _read_umask()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _fsync_dir(directory: Path) -> None:
    # Without this, a crash right after the rename can lose the rename itself on ext4/xfs.
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace `path` with `data` atomically (str is encoded as UTF-8).

    The parent directory is created if needed. An existing file keeps its permission bits; a new
    file gets the usual 0o666 minus the umask (mkstemp's 0o600 would silently make files private).
    A symlink is written through to its target, as a plain write would, instead of being replaced
    by a regular file.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        try:
            _write_all(fd, payload)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(target.parent)
