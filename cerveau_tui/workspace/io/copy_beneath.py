"""Copy a workspace into a folder beneath it, by file descriptor, following no link.

The attack it stops: the done gate's check against the original tests copied the workspace into
`.cerveau/verify` with `shutil.copytree`, by path. A background process that swapped the copy's
folder for a link (`renameat2` exchange) mid-copy made the harness, with the person's rights,
write ~1,500 model-chosen files into a host folder. Here every folder is opened once, with
`O_NOFOLLOW | O_DIRECTORY`, relative to its parent's descriptor, and every file is created with
`O_EXCL | O_NOFOLLOW` in the descriptor of the folder it belongs to: a rename of any path on the
way changes nothing about where the bytes go. Links are copied as links (never followed); FIFOs,
sockets and devices are skipped (opening a FIFO blocks).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from pathlib import Path

from .openat import open_dir_beneath

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20


class CopyTooLarge(RuntimeError):
    """Past the byte budget or the depth cap: the copy is not worth (or not safe) making."""


def copy_tree_beneath(
    root: Path, dest_rel: str, *, skip: Collection[str] = (), max_bytes: int | None = None
) -> int:
    """Copy `root`'s tree (names in `skip` left out at every depth, and `dest_rel`'s first
    component too) into `root/dest_rel`, made fresh. Returns the bytes copied; CopyTooLarge past
    `max_bytes`. The destination must not exist (the caller removes a leftover first)."""
    src = os.open(root, _DIR)
    try:
        dst = open_dir_beneath(src, dest_rel, create=True)
        try:
            if os.listdir(dst):
                raise FileExistsError(f"{dest_rel} is not empty")
            budget = [max_bytes if max_bytes is not None else -1]
            return _copy_dir(src, dst, set(skip), budget, 0)
        finally:
            os.close(dst)
    finally:
        os.close(src)


#: Deeper than this, the copy gives up (a planted 1,100-deep tree made recursive walks raise).
MAX_DEPTH = 128


def _copy_dir(src: int, dst: int, skip: set[str], budget: list[int], depth: int) -> int:
    if depth > MAX_DEPTH:
        raise CopyTooLarge(f"the workspace is deeper than {MAX_DEPTH} folders")
    total = 0
    for name in sorted(os.listdir(src)):
        if name in skip:
            continue
        try:
            st = os.stat(name, dir_fd=src, follow_symlinks=False)
        except FileNotFoundError:
            continue  # gone since the listing
        # A copy never carries a set-id bit (see checkpoints._put): the harness makes no such file.
        mode = stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID)
        if stat.S_ISDIR(st.st_mode):
            os.mkdir(name, 0o700, dir_fd=dst)
            sub_src = os.open(name, _DIR, dir_fd=src)
            try:
                sub_dst = os.open(name, _DIR, dir_fd=dst)
                try:
                    total += _copy_dir(sub_src, sub_dst, skip, budget, depth + 1)
                    os.chmod(sub_dst, mode | 0o700)
                finally:
                    os.close(sub_dst)
            finally:
                os.close(sub_src)
        elif stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(name, dir_fd=src), name, dir_fd=dst)
        elif stat.S_ISREG(st.st_mode):
            total += _copy_file(src, dst, name, mode, budget)
    return total


def _copy_file(src: int, dst: int, name: str, mode: int, budget: list[int]) -> int:
    try:
        fin = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=src)
    except OSError:
        return 0  # swapped for a link or a FIFO since the stat, or unreadable: not copied
    try:
        if not stat.S_ISREG(os.fstat(fin).st_mode):
            return 0
        out = os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=dst,
        )
        copied = 0
        try:
            while chunk := os.read(fin, _CHUNK):
                copied += len(chunk)
                if budget[0] >= 0:
                    budget[0] -= len(chunk)
                    if budget[0] < 0:
                        raise CopyTooLarge("the workspace is larger than the copy's limit")
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view) :]
            os.fchmod(out, mode)
        finally:
            os.close(out)
        return copied
    finally:
        os.close(fin)


def remove_beneath(root: Path, rel: str) -> None:
    """Remove `root/rel` whole, by descriptor: a link swapped in for it (or for a folder on the
    way) is removed as a link, never followed."""
    import shutil

    parent, _, name = rel.rstrip("/").rpartition("/")
    try:
        fd = open_dir_beneath(root, parent) if parent else os.open(root, _DIR)
    except OSError:
        return
    try:
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, dir_fd=fd, ignore_errors=True)
        else:
            os.unlink(name, dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)
