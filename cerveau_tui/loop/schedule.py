"""Scheduling: which of one reply's tool calls may run at the same time. Pure.

Reads and searches run in parallel; two writes to one path, a read and a write of one path, any
two commands (tools that run one: `Tool.runs_command`), and anything needing approval run apart. Batches run one after the other in
emission order, and results are appended in emission order whatever finishes first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..policy.verdict import Verdict
from ..protocol import CallStatus
from ..tools.base import Declared, Tool, ToolResult


@dataclass
class ToolExecution:
    """One tool call from the model's emission to its result (the seed's name and scope).

    `args` are the arguments validated ONCE, when the call is declared; `arguments` the raw dict
    as the model sent it (what the history, the events and repeat detection compare). `error` is a
    declaration failure: the call is scheduled alone and reported in position, never run."""

    index: int  # position in the model's emission
    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    declared: Declared | None = None
    error: str | None = None
    tool: Tool | None = None
    args: BaseModel | None = None
    verdict: Verdict | None = None
    status: CallStatus = CallStatus.QUEUED  # the one vocabulary, to the card (protocol/base.py)
    result: ToolResult | None = None
    stop: bool = False  # the person pressed Esc at this call's approval: stop the turn

    @property
    def runs_command(self) -> bool:
        return self.tool is not None and self.tool.runs_command

    @property
    def command(self) -> str | None:
        """The command a command tool runs, as hooks and the resume brief name it."""
        return str(self.arguments.get("command", "")) if self.runs_command else None

    def finish(self, result: ToolResult, status: CallStatus) -> ToolExecution:
        self.result, self.status = result, status
        return self


def _overlaps(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def _conflict(x: ToolExecution, y: ToolExecution) -> bool:
    if x.runs_command and y.runs_command:
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
