"""Regex search over the workspace, respecting .gitignore."""

from __future__ import annotations

import os
import re

from pydantic import BaseModel

from .base import Declared, Tool, ToolContext, ToolError, ToolResult, resolve_path
from .walk import walk_files


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
        root = resolve_path(ctx.workspace, args.path or ".")
        files = [root] if root.is_file() else walk_files(root, ctx.workspace)
        hits: list[str] = []
        for path in files:
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if len(data) > 2_000_000 or b"\x00" in data[:4096]:
                continue
            rel = os.path.relpath(path, ctx.workspace)
            for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if rx.search(line):
                    hits.append(f"{rel}:{n}: {line.strip()[:200]}")
                    if len(hits) >= self.LIMIT:
                        hits.append(f"[... stopped at {self.LIMIT} matches; narrow the pattern or path]")
                        return ToolResult(ok=True, output="\n".join(hits))
        return ToolResult(ok=True, output="\n".join(hits) if hits else "no matches")
