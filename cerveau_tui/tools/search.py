"""Regex search over the workspace, respecting .gitignore. Files are read beneath the workspace
without following a link (walk.walk_files lists none), so a link planted to a file outside is
never read with the person's rights."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from ..workspace.beneath import lstat_beneath, read_bytes_beneath
from .base import (
    Declared,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    beneath_errors,
    locate,
    resolve_path,
)
from .walk import walk_files

MAX_BYTES = 2_000_000


class Search(Tool):
    name = "search"
    description = "Search file contents with a regular expression."

    class Args(BaseModel):
        pattern: str
        path: str = "."

    LIMIT = 100

    def declare(self, args: Args, ctx: ToolContext) -> Declared:  # type: ignore[override]
        return Declared(reads=[resolve_path(ctx.workspace, args.path or ".")])

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        try:
            rx = re.compile(args.pattern)
        except re.error as exc:
            raise ToolError(f"invalid regular expression {args.pattern!r}: {exc}") from exc
        t = locate(ctx.workspace, args.path or ".")
        with beneath_errors(t):
            st = lstat_beneath(t.root, t.rel)
            if st is None:
                raise ToolError(f"{t.shown}: no such file or directory")
            files: Iterable[Path] = (
                [t.path] if not stat.S_ISDIR(st.st_mode) else walk_files(t.path, ctx.workspace)
            )
        hits: list[str] = []
        for path in files:
            try:
                base = t.root
                data = read_bytes_beneath(base, path.relative_to(base).as_posix(), MAX_BYTES)
            except (OSError, ValueError):
                continue  # too large, a FIFO, gone, or a link swapped in: not read
            if b"\x00" in data[:4096]:
                continue
            rel = os.path.relpath(path, ctx.workspace)
            for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if rx.search(line):
                    hits.append(f"{rel}:{n}: {line.strip()[:200]}")
                    if len(hits) >= self.LIMIT:
                        hits.append(
                            f"[... stopped at {self.LIMIT} matches; narrow the pattern or path]"
                        )
                        return ToolResult(ok=True, output="\n".join(hits))
        return ToolResult(ok=True, output="\n".join(hits) if hits else "no matches")
