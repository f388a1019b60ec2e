"""How a plan's declared files are compared with the paths tools actually wrote.

A model declares `./src/app.py`, `src/`, `tests/*.py` or an absolute path; tools report
workspace-relative posix paths. Both go through `norm_rel` so that the comparison is of one form.
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

_GLOB_CHARS = frozenset("*?[")


def norm_rel(raw: str, workspace: Path | None = None) -> str:
    # Fast path: paths tools report are already clean, and build_report_at normalises thousands
    # of them per call (the report must stay under 20 ms to run after every iteration).
    if (
        raw
        and raw[0] not in _UNCLEAN_START
        and raw[-1] not in _UNCLEAN_END
        and "\\" not in raw
        and "//" not in raw
        and "/./" not in raw
    ):
        return raw
    return _norm_rel(raw, None if workspace is None else str(workspace))


_UNCLEAN_START = frozenset(" \t\n`'\"./")
_UNCLEAN_END = frozenset(" \t\n`'\".")


@lru_cache(maxsize=16384)
def _norm_rel(raw: str, workspace: str | None) -> str:
    p = raw.strip().strip("`'\"").replace("\\", "/")
    trailing = p.endswith("/")
    if workspace is not None and p.startswith("/"):
        ws = os.path.realpath(workspace)
        if p == ws or p.startswith(ws + "/"):
            p = p[len(ws) + 1 :]
    parts = [seg for seg in p.split("/") if seg not in ("", ".")]
    out = "/".join(parts)
    return out + "/" if trailing and out else out


def is_pattern(declared: str) -> bool:
    return declared.endswith("/") or any(c in _GLOB_CHARS for c in declared)


def covers(declared: str, rel: str) -> bool:
    """Whether a declared entry (file, directory or glob) covers a written path."""
    if declared == rel:
        return True
    if any(c in _GLOB_CHARS for c in declared):
        return fnmatchcase(rel, declared) or fnmatchcase(rel, declared.rstrip("/") + "/*")
    base = declared.rstrip("/")
    # A directory declared without its slash ("src") still covers "src/app.py".
    return bool(base) and rel.startswith(base + "/")


def covered_by_any(declared: list[str], rel: str) -> bool:
    return any(covers(d, rel) for d in declared)
