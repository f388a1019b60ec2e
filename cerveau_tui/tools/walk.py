"""Walking the workspace the way a person's tools do: skipping .git, our own folder, and whatever
.gitignore says."""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import pathspec

SKIP_DIRS = {".git", ".cerveau", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache"}


@lru_cache(maxsize=32)
def _gitignore(workspace: str, mtime: float) -> pathspec.PathSpec | None:
    path = Path(workspace) / ".gitignore"
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.PathSpec.from_lines("gitignore", lines)


def gitignore_spec(workspace: Path) -> pathspec.PathSpec | None:
    gi = workspace / ".gitignore"
    try:
        mtime = gi.stat().st_mtime
    except OSError:
        return None
    return _gitignore(str(workspace), mtime)


def walk_files(root: Path, workspace: Path) -> Iterator[Path]:
    spec = gitignore_spec(workspace)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, workspace)
        keep = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS:
                continue
            rel = os.path.normpath(os.path.join(rel_dir, d))
            if spec is not None and spec.match_file(rel + "/"):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if spec is not None and spec.match_file(rel):
                continue
            yield Path(dirpath) / name
