"""A folder that really cannot be written, for tests of a read-only workspace: as root a
read-only bind mount (EROFS; root ignores mode bits, so `chmod -w` would test nothing), as anyone
else the folder's write bits removed (EACCES)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def read_only_tree(src: Path) -> Iterator[Path]:
    """`src` (made by the caller, with its files) as a read-only folder; undone on exit. As root
    the view is `src.parent/ro` (a bind mount of `src`), else `src` itself, made 0o555."""
    if os.geteuid() == 0:
        ws = src.parent / "ro"
        ws.mkdir()
        subprocess.run(["mount", "--bind", str(src), str(ws)], check=True, timeout=30)
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(ws)], check=True, timeout=30)
            yield ws
        finally:
            subprocess.run(["umount", str(ws)], check=False, timeout=30)
    else:
        mode = src.stat().st_mode & 0o7777
        src.chmod(0o555)
        try:
            yield src
        finally:
            src.chmod(mode)
