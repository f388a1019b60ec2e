"""A file's digest: blake3 of its bytes, the key the blob store and every checkpoint use.

Kept apart from the fingerprint (fingerprinter.py) because most callers want only this: the store,
the file tools and the reminders hash bytes they already hold or one file they name, and need
no stat cache, walk or watch for it.
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
from pathlib import Path

import blake3

LARGE_FILE = 1 << 20  # from here mmap + blake3's own threads beat a read() into Python bytes


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
