"""Writing a file so that a reader sees the old content or the new one, never half of each.

A plain `open(path, "w")` truncates first: a write cut short (disk full, file-size limit, the
process killed mid-write) leaves the person's file empty or torn. Writing a temporary file beside
it, fsyncing it, and renaming it over the original makes the change all-or-nothing, because
rename within one directory is atomic on POSIX.

This entry point is for the harness's own files at a path it chose. Its directory is taken as it
resolves now; the file itself is never written through a symbolic link (a link planted at the
name would otherwise send the harness's bytes, with the person's rights, wherever it points).
Files in the workspace go through `beneath.atomic_write_beneath` instead.
"""

from __future__ import annotations

import os
from pathlib import Path

from .beneath import UnsafePath, atomic_write_beneath

__all__ = ["UnsafePath", "atomic_write"]


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace `path` with `data` atomically (str is encoded as UTF-8).

    The parent directory is created if needed. An existing file keeps its permission bits; a new
    file gets the usual 0o666 minus the umask. A symbolic link at `path` is refused (UnsafePath):
    it is not written through, nor replaced.
    """
    parent = Path(os.path.realpath(Path(path).parent))
    rel = (parent / Path(path).name).relative_to("/")
    atomic_write_beneath(Path("/"), rel, data, create_dirs=True)
