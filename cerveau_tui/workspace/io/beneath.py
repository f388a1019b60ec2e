"""Reading and writing files beneath a directory, never through a symbolic link.

The opening itself (openat2, or a walk one component at a time with O_NOFOLLOW, and why) is in
openat.py; its names are re-exported here, the one place callers import from. This module adds
what is built on it: writes are atomic (temp file beside the target, fsync, rename): a plain
`open(path, "w")` truncates first, so a write cut short (disk full, a file-size limit, the process
killed) left the person's file empty or torn. Temp files carry one prefix, TEMP_PREFIX, so one torn by a crash is recognised: the walk never lists it and
`sweep_torn_temps` removes it. And the harness's own state directories are opened here, with
whatever was planted in their place moved aside.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from .openat import (
    FileTooLarge,
    NotRegularFile,
    UnsafePath,
    lstat_beneath,
    open_beneath,
    open_dir_beneath,
    read_bytes_beneath,
    split_parent,
    split_rel,
)

__all__ = [
    "TEMP_PREFIX",
    "UMASK",
    "FileTooLarge",
    "MovedAside",
    "NotRegularFile",
    "UnsafePath",
    "atomic_write_beneath",
    "is_torn_temp",
    "lstat_beneath",
    "move_aside",
    "open_beneath",
    "open_dir_beneath",
    "open_state_dir",
    "replace_at",
    "read_bytes_beneath",
    "split_parent",
    "split_rel",
    "sweep_torn_temps",
    "temp_name",
    "unlink_beneath",
    "write_at",
    "write_new",
]

TEMP_PREFIX = ".cerveau-tmp-"


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


SETID = stat.S_ISUID | stat.S_ISGID
UMASK = _read_umask()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _fsync(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass


def temp_name(name: str) -> str:
    return f"{TEMP_PREFIX}{secrets.token_hex(6)}-{name[:64]}"


def is_torn_temp(name: str) -> bool:
    return name.startswith(TEMP_PREFIX)


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def write_new(
    dir_fd: int, name: str, data: bytes, mode: int | None = None, *, sync: bool = True
) -> None:
    """A new file `name` in `dir_fd` (O_EXCL: never an existing file, never through a link)
    holding `data`, its mode set (None: 0o600), fsync'd when `sync`."""
    fd = os.open(name, _NEW_FILE, 0o600, dir_fd=dir_fd)
    try:
        _write_all(fd, data)
        if mode is not None:
            os.fchmod(fd, mode)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def replace_at(dir_fd: int, name: str, make: Callable[[str], object]) -> None:
    """`name` in `dir_fd` replaced all or nothing: `make(tmp)` creates the new one under a temp
    name beside it (write_new, or a symlink), then the rename replaces whatever is at `name` (a
    link is replaced, never followed). Whatever fails, no temp file is left behind."""
    tmp = temp_name(name)
    try:
        make(tmp)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except FileExistsError:
        raise  # the temp name was someone else's: not ours to remove
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise


def write_at(dir_fd: int, name: str, data: bytes, shown: str | None = None) -> None:
    """Replace `name` in the open directory `dir_fd` atomically. A link at `name` is refused (the
    rename would replace the link, never follow it, but a link where a file was judged means
    something changed under us). An existing file keeps its mode; a new one gets 0o666 minus the
    umask (mkstemp's 0o600 would silently make files private)."""
    shown = shown or name
    try:
        st: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise UnsafePath(
            f"{shown}: a symbolic link on the way ({shown}); refusing to write through it"
        )
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", shown)
    # An existing file keeps its mode but never a set-id bit: new bytes in a set-user-ID file
    # (as root, root's) would be the model's program running with the owner's rights.
    mode = st.st_mode & 0o7777 & ~SETID if st is not None else 0o666 & ~UMASK
    replace_at(dir_fd, name, partial(write_new, dir_fd, data=data, mode=mode))
    # Without this, a crash right after the rename can lose the rename itself on ext4/xfs.
    _fsync(dir_fd)


def atomic_write_beneath(
    root: Path | int, rel: str | Path, data: bytes | str, *, create_dirs: bool = True
) -> None:
    """Replace `rel` beneath `root` with `data` (str as UTF-8), all or nothing, following no link."""
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    dirs, name = split_parent(rel)
    parent = open_dir_beneath(root, "/".join(dirs), create=create_dirs)
    try:
        write_at(parent, name, payload, os.fspath(rel))
    finally:
        os.close(parent)


def unlink_beneath(root: Path | int, rel: str | Path, *, missing_ok: bool = True) -> bool:
    """Remove the file `rel` (a link is removed itself, never its target). True when removed."""
    dirs, name = split_parent(rel)
    try:
        parent = open_dir_beneath(root, "/".join(dirs))
    except FileNotFoundError:
        if missing_ok:
            return False
        raise
    try:
        os.unlink(name, dir_fd=parent)
        return True
    except FileNotFoundError:
        if missing_ok:
            return False
        raise
    finally:
        os.close(parent)


#: How deep the sweep goes: os.fwalk recursed, so a cloned tree deeper than Python's recursion
#: limit (a shell loop of `mkdir a; cd a`) was a RecursionError that stopped every session start.
SWEEP_MAX_DEPTH = 128


def sweep_torn_temps(
    root: Path,
    older_than_s: float = 300.0,
    clock: Callable[[], float] = time.time,
    skip: frozenset[str] = frozenset({".git", "node_modules", ".venv"}),
) -> list[str]:
    """Remove temp files a crash left mid-write (TEMP_PREFIX, older than `older_than_s`: a younger
    one may be a write in progress). Walks by directory fd without following links, iteratively,
    at most SWEEP_MAX_DEPTH folders deep. Returns what it removed, relative to `root`."""
    now = clock()
    removed: list[str] = []
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    # Folders still to visit, by name: one fd open at a time (a stack of fds ran out of them in
    # a folder with thousands of subfolders), each reopened beneath `root` without links.
    stack: list[tuple[str, int]] = [("", 0)]
    try:
        while stack:
            rel_dir, depth = stack.pop()
            try:
                fd = open_dir_beneath(top, rel_dir)
            except OSError:
                continue
            try:
                with os.scandir(fd) as it:
                    entries = list(it)
                for e in entries:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
                    if stat.S_ISDIR(st.st_mode):
                        if e.name not in skip and depth < SWEEP_MAX_DEPTH:
                            stack.append((rel, depth + 1))
                    elif (
                        is_torn_temp(e.name)
                        and stat.S_ISREG(st.st_mode)
                        and now - st.st_mtime >= older_than_s
                    ):
                        try:
                            os.unlink(e.name, dir_fd=fd)
                        except OSError:
                            continue
                        removed.append(rel)
            except OSError:
                pass
            finally:
                os.close(fd)
    finally:
        os.close(top)
    return sorted(removed)


# --- the harness's own state directories -------------------------------------------------------------
#
# A `.cerveau/sessions` replaced by a link made the next session write its log wherever it pointed.
# Refusing would stop the session from starting over one planted link; following would write
# through it. So the planted entry is moved aside (rename never follows a link), a real directory
# is made in its place, and the caller is handed a MovedAside to show as a warning.


@dataclass(frozen=True)
class MovedAside:
    """Something planted where the harness keeps its state, moved out of the way (rename never
    follows a link) so a fresh directory could be made. The caller shows it as a warning."""

    path: str  # relative to the workspace: what was there
    moved_to: str  # relative to the workspace: where it is now
    pointed_to: str | None  # the link's target, None when it was not a link

    def __str__(self) -> str:
        what = (
            f"a symbolic link to {self.pointed_to}"
            if self.pointed_to is not None
            else "not a directory"
        )
        return (
            f"{self.path} was {what}; moved it aside to {self.moved_to} and made a fresh "
            "directory (nothing was written where it pointed)"
        )


def _aside_name(dir_fd: int, name: str) -> str:
    for n in range(1, 1000):
        cand = f"{name}.suspect-{n}"
        try:
            os.stat(cand, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return cand
    raise FileExistsError(errno.EEXIST, "too many suspect entries", name)


def move_aside(dir_fd: int, name: str, done: list[str]) -> MovedAside:
    """Rename the entry `name` in `dir_fd` to `<name>.suspect-<n>`; `done` is its parent's path."""
    try:
        pointed: str | None = os.readlink(name, dir_fd=dir_fd)
    except OSError:
        pointed = None
    aside = _aside_name(dir_fd, name)
    os.rename(name, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    prefix = "/".join(done)
    join = (lambda n: f"{prefix}/{n}") if prefix else (lambda n: n)
    return MovedAside(join(name), join(aside), pointed)


def open_state_dir(workspace: Path, rel: str) -> tuple[int, list[MovedAside]]:
    """An fd of the harness's own directory `rel` (e.g. `.cerveau/sessions`) beneath the workspace,
    made if missing. A link or a file planted on the way is moved aside and a real directory made
    in its place: the harness's state is never written where a link points, and the session still
    starts. Returns the fd (the caller closes it) and what was moved aside."""
    parts = split_rel(rel)
    moved: list[MovedAside] = []
    cur = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts):
            for _attempt in range(3):  # a model re-planting the link between our calls
                try:
                    nxt = os.open(
                        part,
                        os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                        dir_fd=cur,
                    )
                    break
                except FileNotFoundError:
                    try:
                        os.mkdir(part, 0o777, dir_fd=cur)
                    except FileExistsError:
                        pass
                except OSError as exc:
                    if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
                    moved.append(move_aside(cur, part, parts[:i]))
            else:
                raise UnsafePath(
                    f"{rel}: something keeps replacing {'/'.join(parts[: i + 1])}; not using it"
                )
            os.close(cur)
            cur = nxt
        return cur, moved
    except BaseException:
        os.close(cur)
        raise
