"""Reading the files the reminder sources quote (AGENTS.md, skills): the head of a file, capped.

Beneath the workspace nothing is followed through a symbolic link (workspace.io.beneath): an
`AGENTS.md -> ~/.ssh/id_rsa` planted in a cloned repository would otherwise be pasted into the
model's prompt, and from there into whatever the model writes. The person's own config dir is
theirs, so a link there (a dotfiles checkout) is followed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..workspace.fingerprint.digest import hash_bytes
from ..workspace.io.beneath import NotRegularFile, open_beneath


@dataclass(frozen=True)
class Head:
    """The first `cap` bytes of a file, and how big it really is."""

    text: str
    size: int
    digest: str  # blake3 of the bytes read (the head) and the size: a change past the cap counts
    read: int  # bytes read

    @property
    def truncated(self) -> bool:
        return self.size > self.read


def _head_of(fd: int, cap: int, shown: str) -> Head:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(shown)
    chunks: list[bytes] = []
    got = 0
    while got < cap:
        chunk = os.read(fd, min(1 << 16, cap - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    data = b"".join(chunks)
    # A cut in the middle of a UTF-8 sequence would end the text with U+FFFD: drop the tail.
    text = data.decode("utf-8", "replace")
    if len(data) >= cap:
        text = text.rstrip("\ufffd")
    size = max(st.st_size, len(data))
    return Head(text, size, hash_bytes(data + f"\0{size}".encode()), len(data))


def read_head_beneath(root: Path, rel: str, cap: int) -> Head | None:
    """The head of `rel` beneath `root`, no link followed; None when it is not there. Raises
    UnsafePath for a link, NotRegularFile for a FIFO or device (opened non-blocking)."""
    try:
        fd = open_beneath(root, rel, os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        return _head_of(fd, cap, rel)
    finally:
        os.close(fd)


def read_head(path: Path, cap: int) -> Head | None:
    """The head of a file in the person's own config dir (links followed: their dotfiles)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        return _head_of(fd, cap, str(path))
    finally:
        os.close(fd)


def with_cut(name: str, head: Head, cap: int) -> str:
    """The text, and the truncation said where it happened (the model must not take a cut file
    for the whole of it)."""
    if not head.truncated:
        return head.text
    return (
        f"{head.text}\n[{name} is {head.size} bytes; only the first {cap} are shown "
        f"(context.instructions_max_bytes)]"
    )
