"""Delegation: a read-only child turn that answers ONE question and reports what it read.

The lock is structural: the child's registry holds only reading tools, so it cannot write, run a
command, or delegate again. Nesting is impossible rather than forbidden.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..bus import Emitter, Recorder
from ..protocol import EventType
from .state import Limits, Outcome

READ_TOOLS = ("read_file", "list_files", "search")


@dataclass
class DelegateLimits:
    # Smaller than the parent's on purpose: a child that needs more rounds was given two questions.
    max_iterations: int = 8
    # The cap is on the ANSWER, not the work: a child returning its whole context defeats the point.
    max_result_bytes: int = 4000


@dataclass
class DelegateResult:
    conclusion: str
    read: list[str] = field(default_factory=list)  # proves it looked, so a person can spot-check
    unread: list[str] = field(default_factory=list)  # refused or failed reads: holes, declared
    truncated: bool = False
    reason: str = ""

    def __str__(self) -> str:
        parts = [self.conclusion.strip() or "(no conclusion)"]
        if self.truncated:
            parts.append("[conclusion truncated]")
        parts.append("Read: " + (", ".join(self.read) if self.read else "nothing"))
        if self.unread:
            parts.append("Could not read: " + ", ".join(self.unread))
        if self.reason != "completed":
            parts.append(f"[the child turn ended: {self.reason}]")
        return "\n".join(parts)


class Child(Protocol):
    def run(self, task: str) -> Outcome: ...


#: A read-only turn runner on its own bus (Engine.read_only_child): its registry holds only
#: READ_TOOLS and it asks nobody.
ChildFactory = Callable[[Emitter, Limits], Child]


def delegate(
    task: str,
    path: str = ".",
    *,
    parent_bus: Emitter,
    spawn: ChildFactory,
    max_identical_calls: int,
    lim: DelegateLimits | None = None,
) -> DelegateResult:
    lim = lim or DelegateLimits()
    child_bus = Emitter(session_id=parent_bus.session_id + "-child")
    rec = Recorder(child_bus)
    child = spawn(child_bus, Limits(lim.max_iterations, max_identical_calls, 0))
    parent_bus.emit(EventType.DELEGATED, {"task": task, "path": path, "state": "started"})
    outcome = child.run(
        f"Answer this question by reading the workspace (start at {path}); do not change anything.\n{task}"
    )
    read: list[str] = []
    unread: list[str] = []
    calls = {e.payload["call_id"]: e.payload for e in rec.of("tool_call")}
    for r in rec.of("tool_result"):
        call = calls.get(r.payload["call_id"], {})
        target = call.get("arguments", {}).get("path") or call.get("arguments", {}).get(
            "pattern", ""
        )
        if call.get("name") in READ_TOOLS:
            (read if r.payload["ok"] else unread).append(
                f"{call['name']}:{target}" if call["name"] != "read_file" else target
            )
    text = outcome.message if outcome.reason == "completed" else ""
    raw = text.encode()
    truncated = len(raw) > lim.max_result_bytes
    if truncated:
        text = raw[: lim.max_result_bytes].decode(errors="ignore")
    result = DelegateResult(text, sorted(set(read)), sorted(set(unread)), truncated, outcome.reason)
    parent_bus.emit(
        EventType.DELEGATED,
        {
            "task": task,
            "state": "finished",
            "reason": outcome.reason,
            "read": result.read,
            "unread": result.unread,
            "iterations": outcome.iterations,
        },
    )
    return result
