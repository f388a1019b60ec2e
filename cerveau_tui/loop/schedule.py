"""Scheduling: which of one reply's tool calls may run at the same time. Pure.

Reads and searches run in parallel; two writes to one path, a read and a write of one path, any
two bash calls, and anything needing approval run apart. Batches run one after the other in
emission order, and results are appended in emission order whatever finishes first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..tools.base import Declared


@dataclass
class ToolExecution:
    index: int  # position in the model's emission
    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    declared: Declared | None = None
    error: str | None = None  # a declaration failure: scheduled alone, reported in position


def _overlaps(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def _conflict(x: ToolExecution, y: ToolExecution) -> bool:
    if x.name == "bash" and y.name == "bash":
        return True
    dx, dy = x.declared, y.declared
    if dx is None or dy is None:
        return True
    for w in dx.writes:
        if any(_overlaps(w, p) for p in (*dy.writes, *dy.reads)):
            return True
    for w in dy.writes:
        if any(_overlaps(w, p) for p in dx.reads):
            return True
    return False


def schedule(
    execs: list[ToolExecution],
    max_parallel: int,
    needs_approval: Callable[[ToolExecution], bool],
) -> list[list[ToolExecution]]:
    batches: list[list[ToolExecution]] = []
    current: list[ToolExecution] = []
    for ex in sorted(execs, key=lambda e: e.index):
        alone = ex.error is not None or needs_approval(ex)
        fits = (
            not alone
            and current
            and len(current) < max(1, max_parallel)
            and not any(c.error is not None or _conflict(c, ex) for c in current)
        )
        if fits:
            current.append(ex)
            continue
        if current:
            batches.append(current)
        current = [ex]
        if alone:
            batches.append(current)
            current = []
    if current:
        batches.append(current)
    return batches
