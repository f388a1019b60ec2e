"""No set-id bit leaves the sandbox: the sweep after each command.

Run as root, a command's files are root's files on the host, and their mode is the command's
choice: a set-user-ID copy of an interpreter left in the workspace gave another user on the
machine euid 0. The seccomp filter refuses chmod/fchmod/fchmodat/fchmodat2, creat, mknod and an
O_CREAT/O_TMPFILE open whose mode carries S_ISUID or S_ISGID (seccomp_filter.py); this sweep is
the second line, for a file that carries the bits some other way (one already set-id before the
command, a path the filter cannot see). Every regular file under the writable roots that carries
either bit loses both, and the model is told in one line, as the git guard tells it of hooks.

fd-safe: each folder is opened beneath the root without following a link (openat.py), each file
by name in that folder with O_PATH | O_NOFOLLOW, and the mode changed on that very inode (the
fd's /proc link, so no read permission is needed): a name swapped for a link between the scan and
the change is never followed out of the workspace. A set-id file with other hard links loses its
workspace name instead: clearing would change the other names' file too, and a link to a host
set-id binary (the classic way to keep an unpatched one alive) is not the workspace's to keep.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..workspace.io.openat import open_dir_beneath

SETID_BITS = stat.S_ISUID | stat.S_ISGID
#: Folders are visited by name from the root (one fd open at a time, as sweep_torn_temps does):
#: a command's `mkdir a; cd a` loop cannot exhaust fds or the stack.
MAX_DEPTH = 256


@dataclass(frozen=True)
class SetIdFile:
    rel: str  # relative to the root it was found under (the root itself when it is a file)
    action: str  # "cleared" | "removed (a hard link)" | "NOT cleared: <why>"

    @property
    def undone(self) -> bool:
        return not self.action.startswith("NOT")


def _neutralize(dir_fd: int, name: str) -> str:
    try:
        fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        return f"NOT cleared: {exc.strerror}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not st.st_mode & SETID_BITS:
            return "cleared"  # replaced meanwhile by something that is not a set-id file
        if st.st_nlink > 1:
            now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                os.unlink(name, dir_fd=dir_fd)
                return "removed (a hard link)"
            return "cleared"
        os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(st.st_mode) & ~SETID_BITS)
        return "cleared"
    except OSError as exc:
        return f"NOT cleared: {exc.strerror or exc}"
    finally:
        os.close(fd)


def _sweep_file(path: Path) -> list[SetIdFile]:
    try:
        st = os.lstat(path)
    except OSError:
        return []
    if not stat.S_ISREG(st.st_mode) or not st.st_mode & SETID_BITS:
        return []
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        return [SetIdFile(path.name, f"NOT cleared: {exc.strerror}")]
    try:
        return [SetIdFile(path.name, _neutralize(dir_fd, path.name))]
    finally:
        os.close(dir_fd)


def sweep(root: Path) -> list[SetIdFile]:
    """Clear the set-id bits of every regular file under `root` (a folder, or one file). Walks
    every folder, .git and node_modules included: a skipped folder is where a command would put
    the file. Returns what it found, relative to `root`."""
    if not root.is_dir() or root.is_symlink():
        return _sweep_file(root)
    found: list[SetIdFile] = []
    try:
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return found
    stack: list[tuple[str, int]] = [("", 0)]
    try:
        while stack:
            rel_dir, depth = stack.pop()
            try:
                fd = open_dir_beneath(top, rel_dir) if rel_dir else os.dup(top)
            except OSError:
                continue
            try:
                with os.scandir(fd) as it:
                    for e in it:
                        rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
                        try:
                            if e.is_dir(follow_symlinks=False):
                                if depth < MAX_DEPTH:
                                    stack.append((rel, depth + 1))
                                continue
                            # d_type says "regular" without a stat; only those are stat'ed.
                            if not e.is_file(follow_symlinks=False):
                                continue
                            if e.stat(follow_symlinks=False).st_mode & SETID_BITS:
                                found.append(SetIdFile(rel, _neutralize(fd, e.name)))
                        except OSError:
                            continue
            except OSError:
                pass
            finally:
                os.close(fd)
    finally:
        os.close(top)
    return found


def sweep_all(roots: Iterable[Path]) -> list[SetIdFile]:
    """`sweep` over each root; the first (the workspace) names its files relative to itself, the
    others (granted writable paths) by their full path."""
    seen: set[str] = set()
    found: list[SetIdFile] = []
    for i, root in enumerate(roots):
        real = os.path.realpath(root)
        if real in seen:
            continue
        seen.add(real)
        for f in sweep(Path(real)):
            where = real if os.path.isdir(real) else os.path.dirname(real)
            shown = f.rel if i == 0 else os.path.join(where, f.rel)
            found.append(SetIdFile(shown, f.action))
    return found


def setid_note(found: list[SetIdFile], limit: int = 5) -> str:
    """One line the model reads: what it left, and what was done about it."""
    names = [f"{f.rel} ({f.action})" for f in found[:limit]]
    more = f" and {len(found) - limit} more" if len(found) > limit else ""
    verb = "their bits were cleared" if all(f.undone for f in found) else "NOT all were cleared"
    return (
        f"[harness] set-user-ID/set-group-ID files were in the workspace after this command ({', '.join(names)}{more}); "
        f"{verb}. Do not make set-id files: the sandbox refuses them."
    )
