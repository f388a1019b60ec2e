"""Files git would wait on forever: a named pipe, a device, a socket, or a file of /proc, /sys or
/dev (`/proc/kmsg` is a regular file that blocks). Kinds only (stat and directory listings, never
an open), so the snapshot and the view (stall.py) can both ask before git does."""

from __future__ import annotations

import os
import stat

_SPECIAL_ROOTS = ("/proc", "/sys", "/dev")


def special_files(git_dir: str, limit: int = 50_000) -> list[str]:
    """Every entry under a git dir that is neither a folder nor a regular file nor a link to one
    (a named pipe as `refs/heads/main` stalls `git status` as surely as one as HEAD). Entries are
    typed from the directory listing, so a regular file costs no stat; past `limit` entries the
    rest is not looked at (a repository that large has its objects packed)."""
    out: list[str] = []
    stack, seen = [git_dir], 0
    while stack and seen < limit:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    seen += 1
                    if e.is_symlink():
                        if stalls(e.path) is not None:
                            out.append(e.path)
                    elif e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    elif not e.is_file(follow_symlinks=False):
                        out.append(e.path)
        except OSError:
            continue
    return sorted(out)


def stalls(path: str) -> str | None:
    """`path` when git reading it could wait forever (absent is fine: git skips it)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return None  # a loop of links, a permission: git fails fast on those
    if stat.S_ISDIR(st.st_mode):
        return None  # git fails fast reading a folder
    if not stat.S_ISREG(st.st_mode) or _special(path):
        return path
    return None


def _special(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real == r or real.startswith(r + os.sep) for r in _SPECIAL_ROOTS)


def kind_of(path: str) -> str:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "file that cannot be read"
    if stat.S_ISFIFO(mode):
        return "named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "file of " + os.path.realpath(path).split(os.sep)[1]
