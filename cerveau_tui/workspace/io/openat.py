"""Opening a path beneath a directory without following a symbolic link, at the moment of the open.

The harness runs with the person's rights, outside the sandbox. A path judged once and opened
later is a race the model can win: one reply can hold `bash: ln -s /anywhere d` and then
`write_file d/x`; the policy judged `d/x` when `d` did not exist, and a plain `open()` then
followed the new link out of the workspace. The same held for the harness's own state: a
`.cerveau/sessions` replaced by a link made the next session write its log wherever it pointed.

So every open here starts from a directory file descriptor and refuses every symbolic link on the
way, final component included: Linux `openat2(2)` with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does
it in one call; where that syscall is missing or filtered (old kernels, seccomp in containers),
the same is done one component at a time with O_NOFOLLOW. `..` is refused before any syscall.
A link that the policy already saw resolved is not needed: callers open the REALPATH they were
judged on, so a link swapped in after the verdict makes the open fail instead of being followed.

Callers import these from beneath.py, which adds the writes on top.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

_SYS_OPENAT2 = 437  # the same number on every Linux architecture (added in 5.6)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS


class UnsafePath(OSError):
    """A path the harness refuses to open: a symbolic link on the way, or a `..` leaving the root.

    An OSError (ELOOP) so code that already handles I/O failures handles this one; the file tools
    turn it into a ToolError whose message is this one.
    """

    def __init__(self, message: str) -> None:
        super().__init__(errno.ELOOP, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class FileTooLarge(OSError):
    def __init__(self, rel: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{rel} is {size} bytes, more than {limit}")
        self.size = size
        self.limit = limit


class NotRegularFile(OSError):
    def __init__(self, rel: str) -> None:
        super().__init__(errno.EINVAL, f"{rel} is not a regular file (a device, socket or FIFO)")


# --- openat2 ------------------------------------------------------------------------------------


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


class _Unsupported(Exception):
    pass


def _load_syscall() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_long
    return fn


_syscall = _load_syscall()
#: Tests set this False to exercise the component walk; it also turns False by itself the first
#: time the kernel says openat2 is missing (ENOSYS) or a seccomp filter refuses it (EPERM).
use_openat2: bool = _syscall is not None


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int:
    global use_openat2
    assert _syscall is not None
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE)
    fd = _syscall(
        ctypes.c_long(_SYS_OPENAT2),
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(os.fsencode(rel)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd >= 0:
        return int(fd)
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM, errno.E2BIG):
        use_openat2 = False
        raise _Unsupported
    raise OSError(err, os.strerror(err), rel)


# --- paths ----------------------------------------------------------------------------------------


def split_rel(rel: str | Path | Iterable[str]) -> list[str]:
    """The components of a relative path; `.` and empty ones dropped, `..` refused."""
    if isinstance(rel, (str, Path)):
        text = os.fspath(rel)
        if text.startswith("/"):
            raise UnsafePath(
                f"{text}: an absolute path where one relative to its root was expected"
            )
        raw = text.split("/")
    else:
        raw = list(rel)
    parts = [p for p in raw if p not in ("", ".")]
    if ".." in parts:
        raise UnsafePath(f"{'/'.join(raw)}: `..` is not followed out of the directory it names")
    if any("\x00" in p or "/" in p for p in parts):
        raise UnsafePath(f"{'/'.join(raw)}: a path component holds a NUL byte or a slash")
    return parts


def _root_fd(root: Path | int) -> tuple[int, bool]:
    """(fd, owned). The root itself is opened following links: it is the person's choice."""
    if isinstance(root, int):
        return root, False
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), True


def _link_refused(root: Path | int, parts: list[str], at: list[str]) -> UnsafePath:
    where = "directory" if isinstance(root, int) else str(root)
    return UnsafePath(
        f"{'/'.join(parts)}: a symbolic link on the way ({'/'.join(at)}); "
        f"refusing to follow it out of {where}"
    )


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _walk_dirs(
    root: Path | int, base: int, parts: list[str], all_parts: list[str], create: bool
) -> int:
    """Open `parts` as directories one at a time from `base`, never following a link. Returns a
    new fd (the caller closes it)."""
    cur = os.dup(base)
    try:
        for i, part in enumerate(parts):
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                nxt = os.open(part, flags, dir_fd=cur)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=cur)
                except FileExistsError:
                    pass
                nxt = _open_dir_component(root, cur, part, all_parts, parts[: i + 1])
            except (NotADirectoryError, OSError) as exc:
                if exc.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(cur, part):
                    raise _link_refused(root, all_parts, parts[: i + 1]) from None
                raise
            os.close(cur)
            cur = nxt
        return cur
    except BaseException:
        os.close(cur)
        raise


def _open_dir_component(
    root: Path | int, cur: int, part: str, all_parts: list[str], at: list[str]
) -> int:
    try:
        return os.open(
            part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=cur
        )
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(cur, part):
            raise _link_refused(root, all_parts, at) from None
        raise


def _open_at(root: Path | int, parts: list[str], flags: int, mode: int) -> int:
    base, owned = _root_fd(root)
    try:
        if not parts:
            return os.open(".", flags | os.O_CLOEXEC, dir_fd=base)
        if use_openat2:
            try:
                return _openat2(base, "/".join(parts), flags, mode)
            except _Unsupported:
                pass
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EXDEV):
                    raise _link_refused(root, parts, parts) from None
                raise
        parent = _walk_dirs(root, base, parts[:-1], parts, create=False)
        try:
            try:
                return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(parent, parts[-1]):
                    raise _link_refused(root, parts, parts) from None
                raise
        finally:
            os.close(parent)
    finally:
        if owned:
            os.close(base)


# --- the public functions -------------------------------------------------------------------------


def open_beneath(root: Path | int, rel: str | Path, flags: int, mode: int = 0o666) -> int:
    """os.open of `rel` beneath `root` (a directory path, or an open directory fd), following no
    symbolic link on the way nor at the end. Raises UnsafePath for a link or a `..`."""
    return _open_at(root, split_rel(rel), flags, mode)


def open_dir_beneath(root: Path | int, rel: str | Path, *, create: bool = False) -> int:
    """An O_RDONLY fd of the directory `rel` beneath `root`; with `create`, missing components are
    made (each then opened without following, so one swapped for a link is refused)."""
    parts = split_rel(rel)
    flags = os.O_RDONLY | os.O_DIRECTORY
    try:
        return _open_at(root, parts, flags, 0)
    except FileNotFoundError:
        if not create:
            raise
    base, owned = _root_fd(root)
    try:
        return _walk_dirs(root, base, parts, parts, create=True)
    finally:
        if owned:
            os.close(base)


def split_parent(rel: str | Path) -> tuple[list[str], str]:
    parts = split_rel(rel)
    if not parts:
        raise IsADirectoryError(
            errno.EISDIR, "the root itself is a directory, not a file", str(rel)
        )
    return parts[:-1], parts[-1]


def lstat_beneath(root: Path | int, rel: str | Path) -> os.stat_result | None:
    """The status of `rel` itself (a link is reported as a link), or None when it does not exist.
    The directories on the way are still refused when they are links."""
    parts = split_rel(rel)
    if not parts:
        base, owned = _root_fd(root)
        try:
            return os.fstat(base)
        finally:
            if owned:
                os.close(base)
    try:
        parent = open_dir_beneath(root, "/".join(parts[:-1]))
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        return os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    finally:
        os.close(parent)


def read_bytes_beneath(root: Path | int, rel: str | Path, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file `rel` beneath `root`. IsADirectoryError for a directory,
    NotRegularFile for a FIFO or device (opened non-blocking: a FIFO must not hang the harness),
    FileTooLarge past `max_bytes`."""
    shown = os.fspath(rel)
    fd = open_beneath(root, rel, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", shown)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(shown)
        if max_bytes is not None and st.st_size > max_bytes:
            raise FileTooLarge(shown, st.st_size, max_bytes)
        chunks: list[bytes] = []
        limit = max_bytes if max_bytes is not None else -1
        got = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if limit >= 0 and got > limit:  # grew while being read
                raise FileTooLarge(shown, got, limit)
        return b"".join(chunks)
    finally:
        os.close(fd)
