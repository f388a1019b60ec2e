"""Any stack we know nothing specific about: no gate command, no autofix, error-ish lines."""

from __future__ import annotations

import re
from pathlib import Path

from .base import RunCommand, normalise, unique

# "error"/"fail" as words, but not the all-clear ("0 errors", "no failures").
_ERRORISH = re.compile(r"\b(error|errors|fail|failed|failure|fatal|panic)\b", re.IGNORECASE)
_ALL_CLEAR = re.compile(r"\b(0|no)\s+(errors?|failures?|failed)\b", re.IGNORECASE)


class GenericAdapter:
    name = "generic"

    def detect(self, workspace: Path) -> bool:
        return True  # the fallback: always applies, promises nothing

    def gate_command(self, workspace: Path) -> str | None:
        return None

    def autofix(
        self, workspace: Path, run: RunCommand, paths: list[str] | None = None
    ) -> list[str]:
        return []

    def error_lines(self, output: str) -> list[str]:
        keys = []
        for raw in (output or "").splitlines():
            line = normalise(raw)
            if _ERRORISH.search(line) and not _ALL_CLEAR.search(line):
                keys.append(line)
        return unique(keys)
