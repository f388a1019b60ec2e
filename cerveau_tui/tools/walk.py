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
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import pathspec

from ..workspace.beneath import is_torn_temp, open_dir_beneath, read_bytes_beneath

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


def walk_files(root: Path, workspace: Path) -> Iterator[Path]:
    """Regular files under `root` (the realpath of a directory), depth first, each directory's files
    sorted before its subdirectories. `root` is opened beneath the workspace when it is in it, else
    from `/`; a link on the way to it raises beneath.UnsafePath."""
    ws = Path(os.path.realpath(workspace))
    spec = gitignore_spec(ws)
    try:
        base, rel_root = ws, root.relative_to(ws).as_posix()
    except ValueError:
        base, rel_root = Path("/"), root.relative_to("/").as_posix()
    # Opened now, not at the first next(): a refusal belongs to the call, not to a later loop.
    top = open_dir_beneath(base, "" if rel_root == "." else rel_root)
    return _walk(top, root, ws, spec)


def _walk(fd: int, here: Path, ws: Path, spec: pathspec.PathSpec | None) -> Iterator[Path]:
    try:
        with os.scandir(fd) as it:
            entries = sorted(it, key=lambda e: e.name)
        rel_dir = os.path.relpath(here, ws)
        dirs: list[str] = []
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
            elif stat.S_ISREG(mode) and not is_torn_temp(e.name):
                if spec is not None and spec.match_file(rel):
                    continue
                yield here / e.name
        for name in dirs:
            try:
                sub = os.open(
                    name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd
                )
            except OSError:
                continue  # swapped for a link (or removed) since the listing: not followed
            yield from _walk(sub, here / name, ws, spec)
    finally:
        os.close(fd)
