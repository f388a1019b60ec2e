"""The adapter seam: everything stack-specific the gate needs, behind one small protocol.

Core (the loop, the gate) receives an Adapter object and never imports a concrete one; only
`adapters/registry.py` does, and an import-linter contract (`.importlinter`) fails the suite if
that changes. Without the seam, "what a pytest failure looks like" would leak into the gate, and
the second stack would mean editing the loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

#: Run one command: (command, timeout seconds) -> (exit code or None on timeout, output). The
#: gate's criteria and the adapters' fixers both take one; it lives here so adapters import
#: nothing from core.
RunCommand = Callable[[str, float], tuple[int | None, str]]


class Adapter(Protocol):
    name: str

    def detect(self, workspace: Path) -> bool:
        """Whether this workspace is this adapter's stack."""
        ...

    def gate_command(self, workspace: Path) -> str | None:
        """The usual command that says "done" for this stack, or None when none is known."""
        ...

    def autofix(
        self, workspace: Path, run: RunCommand, paths: list[str] | None = None
    ) -> list[str]:
        """Clear mechanically fixable errors in `paths` (workspace-relative); return one line per
        thing that changed, empty when nothing did or no fixer is available."""
        ...

    def error_lines(self, output: str) -> list[str]:
        """The errors in a check's output as normalised keys, stable across cycles (no
        addresses, durations or counters), deduplicated, in first-seen order."""
        ...


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_ADDR = re.compile(r"0x[0-9a-fA-F]+")
_DURATION = re.compile(r"\b\d+(\.\d+)?\s?(s|ms|sec|seconds)\b")
_SPACE = re.compile(r"\s+")


def normalise(line: str) -> str:
    """One error line as a key: the same error must produce the same key on the next cycle, or
    error ages restart every turn and a stalled run looks like a moving one."""
    line = _ANSI.sub("", line)
    line = _ADDR.sub("0x?", line)
    line = _DURATION.sub("?s", line)
    return _SPACE.sub(" ", line).strip()


def unique(keys: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for k in keys:
        if k and k not in seen:
            seen.add(k)
            out.append(k)
    return out
