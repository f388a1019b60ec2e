"""Reading a config or state file the harness trusts, refused unless it is a regular file.

A plain `open()` of `.cerveau/config.toml` made a named pipe there hang start-up forever (the open
waits for a writer), and a directory there was a traceback. Whoever wrote the repository the person
cloned chooses what that path is. So the one opening here is non-blocking (a FIFO opens at once,
and is then refused), checks what it opened with fstat (no race between a look and the open), and
says what the file was instead: a person can act on "is a named pipe", not on a hang.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words a person reads."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


class NotARegularFile(OSError):
    """The path is something other than a regular file: its message names the path and the kind."""

    def __init__(self, path: str | Path, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{path} is {kind}, not a regular file; not read")
        self.path = str(path)
        self.kind = kind

    def __str__(self) -> str:
        return str(self.args[1])


class StateFileTooLarge(OSError):
    def __init__(self, path: str | Path, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{path} is larger than {limit} bytes; not read")

    def __str__(self) -> str:
        return str(self.args[1])


def open_regular(path: str | Path, *, follow_links: bool = True) -> int:
    """An O_RDONLY fd of the regular file `path` (the caller closes it). FileNotFoundError when
    absent; NotARegularFile for a directory, FIFO, socket, device, or (with `follow_links` off) a
    symbolic link. Never blocks: O_NONBLOCK is set for the open, and a regular file ignores it."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise NotARegularFile(path, "a symbolic link (refused here)") from None
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket cannot be opened at all
            try:
                mode = os.stat(path, follow_symlinks=follow_links).st_mode
            except OSError:
                raise exc from None
            if not stat.S_ISREG(mode):
                raise NotARegularFile(path, kind_of(mode)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(path, kind_of(st.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | Path, max_bytes: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `max_bytes` (StateFileTooLarge past it).
    Raises as open_regular does."""
    fd = open_regular(path, follow_links=follow_links)
    try:
        chunks: list[bytes] = []
        got = 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if got > max_bytes:
                raise StateFileTooLarge(path, max_bytes)
        return b"".join(chunks)
    finally:
        os.close(fd)
