"""Walking the workspace the way a person's tools do: skipping .git, our own folder, and whatever
.gitignore says.

The walk goes by directory file descriptors and never follows a symbolic link, to a directory or
to a file: a link planted in the workspace (`ln -s /home/me/.ssh keys`) would otherwise let
list_files and search, which run with the person's rights outside the sandbox, read where it
points. Links are not listed at all (their targets inside the workspace are listed as themselves),
nor FIFOs (reading one blocks), nor the temp files of a write a crash tore.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

import pathspec

from ..state_file import kind_of
from ..workspace.io.beneath import is_torn_temp, open_dir_beneath, read_bytes_beneath

SKIP_DIRS = {
    ".git",
    ".cerveau",
    ".venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
}
_GITIGNORE_MAX = 1_000_000


@lru_cache(maxsize=32)
def _gitignore(workspace: str, mtime: float) -> pathspec.PathSpec | None:
    try:
        data = read_bytes_beneath(Path(workspace), ".gitignore", _GITIGNORE_MAX)
    except OSError:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    return pathspec.PathSpec.from_lines("gitignore", lines)


def gitignore_spec(workspace: Path) -> pathspec.PathSpec | None:
    try:
        mtime = os.stat(workspace / ".gitignore", follow_symlinks=False).st_mtime
    except OSError:
        return None
    return _gitignore(str(workspace), mtime)


#: Deeper than this many folders below the walk's root is not entered. Each level holds one open
#: directory fd, and a model can build `a/a/a/...` thousands deep with one shell loop: the walk
#: was recursive and died of RecursionError (a crash of list_files and search, not an answer).
MAX_DEPTH = 128

#: Told why an entry was not listed: (its path, a short reason). Links and ignored files are
#: never told: not listing them is the walk's rule, not a loss.
OnSkip = Callable[[Path, str], None]


def walk_files(
    root: Path,
    workspace: Path,
    on_skip: OnSkip | None = None,
    keep_going: Callable[[], bool] | None = None,
) -> Iterator[Path]:
    """Regular files under `root` (the realpath of a directory), depth first, each directory's files
    sorted before its subdirectories. `root` is opened beneath the workspace when it is in it, else
    from `/`; a link on the way to it raises beneath.UnsafePath.

    `on_skip` hears what was not listed for another reason than a rule (a FIFO, a device, a folder
    that cannot be opened or is too deep); `keep_going` is asked before each directory is read, so
    a caller's deadline holds even in a tree whose files are all ignored."""
    ws = Path(os.path.realpath(workspace))
    spec = gitignore_spec(ws)
    try:
        base, rel_root = ws, root.relative_to(ws).as_posix()
    except ValueError:
        base, rel_root = Path("/"), root.relative_to("/").as_posix()
    # Opened now, not at the first next(): a refusal belongs to the call, not to a later loop.
    top = open_dir_beneath(base, "" if rel_root == "." else rel_root)
    return _walk(top, root, ws, spec, on_skip or _ignore, keep_going or _always)


def _ignore(path: Path, reason: str) -> None:
    pass


def _always() -> bool:
    return True


def _walk(
    top: int,
    root: Path,
    ws: Path,
    spec: pathspec.PathSpec | None,
    on_skip: OnSkip,
    keep_going: Callable[[], bool],
) -> Iterator[Path]:
    # An explicit stack, not recursion: (directory fd, its path, its subdirectories not yet entered).
    stack: list[tuple[int, Path, Iterator[str]]] = []
    try:
        pending: tuple[int, Path] | None = (top, root)
        while pending is not None or stack:
            if pending is not None:
                fd, here = pending
                pending = None
                dirs: list[str] = []
                if keep_going():
                    try:
                        yield from _files_of(fd, here, ws, spec, on_skip, dirs)
                    except OSError:
                        on_skip(here, "a folder that could not be read")
                        dirs = []
                stack.append((fd, here, iter(dirs)))
                if not keep_going():
                    break
                continue
            fd, here, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(fd)
                stack.pop()
                continue
            if len(stack) > MAX_DEPTH:
                on_skip(here / name, f"deeper than {MAX_DEPTH} folders")
                continue
            try:
                sub = os.open(
                    name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd
                )
            except OSError:
                continue  # swapped for a link (or removed) since the listing: not followed
            pending = (sub, here / name)
    finally:
        if pending is not None:
            os.close(pending[0])
        for fd, _, _ in stack:
            os.close(fd)


def _files_of(
    fd: int,
    here: Path,
    ws: Path,
    spec: pathspec.PathSpec | None,
    on_skip: OnSkip,
    dirs: list[str],
) -> Iterator[Path]:
    """The regular files of one directory, in name order; its subdirectories go into `dirs`."""
    with os.scandir(fd) as it:
        entries = sorted(it, key=lambda e: e.name)
    rel_dir = os.path.relpath(here, ws)
    for e in entries:
        try:
            mode = e.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        rel = os.path.normpath(os.path.join(rel_dir, e.name))
        if stat.S_ISDIR(mode):
            if e.name in SKIP_DIRS or (spec is not None and spec.match_file(rel + "/")):
                continue
            dirs.append(e.name)
        elif stat.S_ISLNK(mode) or is_torn_temp(e.name):
            continue
        elif spec is not None and spec.match_file(rel):
            continue
        elif stat.S_ISREG(mode):
            yield here / e.name
        else:
            on_skip(here / e.name, kind_of(mode))
