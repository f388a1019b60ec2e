"""Delegation: a read-only child turn that answers ONE question and reports what it read.

The lock is structural: the child's registry holds only reading tools, so it cannot write, run a
command, or delegate again. Nesting is impossible rather than forbidden.

The child is the parent's, not a second session beside it: the parent's interrupt reaches it
(`LinkedCancel`: before, a child started by `explore` kept calling the model after the person had
pressed Esc), and its tokens are the parent's (`Spend`: bounded by what the parent turn has left,
and added to the parent turn's usage through the tool result's meta).

The child must not cost the parent its cache (issue 36). It sends the parent's system message and
tools, byte for byte (tools/explore.py's ChildRegistry: only the reading tools RUN), so its first
request reuses the parent's prefix; and on a one-slot server its requests replace the parent's
conversation in the slot, so the slot is set aside before the child and put back after
(`SideSlot`, session/slot_keeper.py), the parent's next `cache_n` the proof. A server with several
slots gives the child a free slot by itself (llama-server picks the most similar idle slot).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .. import protocol as P
from ..bus import Emitter, Recorder
from ..config_sections import DelegationConfig
from ..protocol import Event, TurnStarted, UsagePayload
from ..provider.types import Usage
from .state import Limits, Outcome

READ_TOOLS = ("read_file", "list_files", "search")

#: What a child turn is told, before its question. One constant for the product and the tests:
#: a fixture that paraphrases the product's words measures the paraphrase.
DELEGATE_INSTRUCTIONS = (
    "You are a read-only helper answering ONE question for another agent. Use only the reading "
    f"tools you have ({', '.join(READ_TOOLS)}); you cannot change anything, run a command, or "
    "ask anyone. Read what the question needs, then answer in a few sentences: what you found, "
    "with the paths it is in. If you could not read something the answer depends on, say so."
)


def delegate_input(task: str, path: str) -> str:
    return f"{DELEGATE_INSTRUCTIONS}\nStart at: {path}\nQuestion: {task}"


@dataclass
class DelegateLimits:
    # Smaller than the parent's on purpose: a child that needs more rounds was given two questions.
    max_iterations: int = 8
    # The cap is on the ANSWER, not the work: a child returning its whole context defeats the point.
    max_result_bytes: int = 4000
    # The child's own token ceiling; 0: what the parent turn has left (none if the parent has none).
    max_tokens: int = 0

    @classmethod
    def of(cls, cfg: DelegationConfig) -> DelegateLimits:
        return cls(cfg.max_iterations, cfg.max_result_bytes, cfg.max_tokens)


@dataclass
class DelegateResult:
    conclusion: str
    read: list[str] = field(default_factory=list)  # proves it looked, so a person can spot-check
    unread: list[str] = field(default_factory=list)  # refused or failed reads: holes, declared
    truncated: bool = False
    reason: str = ""
    # The changes the child tried and was refused, by path (a command by its text, else the
    # tool's name): declared rather than reported as "could not read" (it looked, decided, and
    # was stopped). There is no `wrote`: the child has no writing tool (structural), so a list
    # of what it wrote could only ever be empty.
    unwritten: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)  # the child's tokens, debited to the parent turn

    def __str__(self) -> str:
        parts = [self.conclusion.strip() or "(no conclusion)"]
        if self.truncated:
            parts.append("[conclusion truncated]")
        parts.append("Read: " + (", ".join(self.read) if self.read else "nothing"))
        if self.unread:
            parts.append("Could not read: " + ", ".join(self.unread))
        if self.unwritten:
            parts.append("Refused changes: " + ", ".join(self.unwritten))
        if self.reason != "completed":
            parts.append(f"[the child turn ended: {self.reason}]")
        return "\n".join(parts)


class LinkedCancel(threading.Event):
    """The child's cancel flag: set when its own is, or when the parent's is. Clearing it (the
    child's turn start does) clears only its own, so a parent interrupt cannot be lost."""

    def __init__(self, parent: threading.Event) -> None:
        super().__init__()
        self._parent = parent

    def is_set(self) -> bool:
        return super().is_set() or self._parent.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        end = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            left = 0.05 if end is None else min(0.05, end - time.monotonic())
            if left <= 0:
                return False
            super().wait(left)
        return True


class Spend:
    """The parent turn's tokens so far, as its bus told them (usage events, reset at each
    turn_started), plus what its children spent: what the next child may still use."""

    def __init__(self, bus: Emitter) -> None:
        self._lock = threading.Lock()
        self._spent = 0
        bus.subscribe(self._on)

    def _on(self, e: Event) -> None:
        payload: Any = e.payload
        with self._lock:
            if e.type == TurnStarted.event_type:
                self._spent = 0
            elif e.type == UsagePayload.event_type and isinstance(payload, dict):
                self._spent += int(payload.get("prompt_tokens") or 0)
                self._spent += int(payload.get("completion_tokens") or 0)

    def debit(self, usage: Usage) -> None:
        with self._lock:
            self._spent += usage.prompt_tokens + usage.completion_tokens

    def left(self, ceiling: int) -> int | None:
        """Tokens left under `ceiling` (0: no ceiling, None)."""
        if not ceiling:
            return None
        with self._lock:
            return max(0, ceiling - self._spent)


@runtime_checkable
class SideSlot(Protocol):
    """A provider that keeps the session's server slot (session/slot_keeper.py): `aside()`
    brackets a side conversation, the slot saved before and restored after."""

    def aside(self) -> AbstractContextManager[None]: ...


class Child(Protocol):
    def run(self, task: str) -> Outcome: ...


#: A read-only turn runner on its own bus (Engine.read_only_child): its registry holds only
#: READ_TOOLS and it asks nobody.
ChildFactory = Callable[[Emitter, Limits], Child]


def child_ceiling(lim: DelegateLimits, parent_left: int | None) -> int | None:
    """The child's token ceiling: its own cap and the parent's remainder, the smaller; None when
    the parent has no room left at all (the child must not start)."""
    caps = [c for c in (lim.max_tokens or None, parent_left) if c is not None]
    ceiling = min(caps) if caps else 0
    return None if parent_left == 0 else ceiling


def delegate(
    task: str,
    path: str = ".",
    *,
    parent_bus: Emitter,
    spawn: ChildFactory,
    max_identical_calls: int,
    lim: DelegateLimits | None = None,
    parent_cancel: threading.Event | None = None,
    parent_left: int | None = None,
) -> DelegateResult:
    lim = lim or DelegateLimits()
    if parent_cancel is not None and parent_cancel.is_set():
        return DelegateResult("", reason=P.TURN_INTERRUPTED)
    ceiling = child_ceiling(lim, parent_left)
    if ceiling is None:
        return DelegateResult("", reason=P.TURN_TOKEN_CEILING)
    child_bus = Emitter(session_id=parent_bus.session_id + "-child")
    rec = Recorder(child_bus)
    child = spawn(child_bus, Limits(lim.max_iterations, max_identical_calls, ceiling))
    parent_bus.emit(P.Delegated(task=task, path=path, state="started"))
    outcome = child.run(delegate_input(task, path))
    result = _result(outcome, rec, lim)
    parent_bus.emit(
        P.Delegated(
            task=task,
            state="finished",
            reason=outcome.reason,
            read=result.read,
            unread=result.unread,
            unwritten=result.unwritten,
            iterations=outcome.iterations,
            prompt_tokens=result.usage.prompt_tokens,
            completion_tokens=result.usage.completion_tokens,
        ),
    )
    return result


def _result(outcome: Outcome, rec: Recorder, lim: DelegateLimits) -> DelegateResult:
    read: set[str] = set()
    unread: set[str] = set()
    unwritten: set[str] = set()
    calls = {e.payload["call_id"]: e.payload for e in rec.of("tool_call")}
    for r in rec.of("tool_result"):
        call = calls.get(r.payload["call_id"], {})
        name = str(call.get("name") or r.payload.get("name") or "")
        args = call.get("arguments") or {}
        target = str(args.get("path") or args.get("pattern") or args.get("command") or "")
        if name in READ_TOOLS:
            (read if r.payload["ok"] else unread).add(
                target if name == "read_file" else f"{name}:{target}"
            )
        elif not r.payload["ok"]:
            unwritten.add(target or name)
    text = outcome.message if outcome.reason == P.TURN_COMPLETED else ""
    raw = text.encode()
    truncated = len(raw) > lim.max_result_bytes
    if truncated:
        text = raw[: lim.max_result_bytes].decode(errors="ignore")
    usage = Usage(outcome.usage.prompt_tokens, outcome.usage.completion_tokens)
    return DelegateResult(
        text,
        sorted(read),
        sorted(unread),
        truncated,
        outcome.reason,
        sorted(unwritten),
        usage,
    )


class Delegation:
    """The parent's side of delegating (Engine.delegator): the limits from settings.delegation,
    the parent's cancel flag, and its spend, so the child's tokens are bounded by what the
    parent turn has left and debited to it. Called as the explore tool's `ctx.delegate`."""

    def __init__(
        self,
        bus: Emitter,
        cancel: threading.Event,
        spawn: ChildFactory,
        limits: Limits,
        cfg: DelegationConfig,
        slot: SideSlot | None = None,
    ) -> None:
        self.bus, self.cancel, self.spawn, self.limits, self.cfg = bus, cancel, spawn, limits, cfg
        self.slot = slot  # the parent's server slot, set aside while the child runs
        self.spend = Spend(bus)
        # Reads run in parallel, explore among them: under a ceiling, two children started at
        # once were each given the whole remainder, and the turn spent it twice over. One child
        # at a time then (the server answers one request at a time anyway).
        self._one = threading.Lock()

    def __call__(self, task: str, path: str = ".") -> DelegateResult:
        if not self.limits.max_turn_tokens:
            return self._delegate(task, path)
        with self._one:
            return self._delegate(task, path)

    def _delegate(self, task: str, path: str) -> DelegateResult:
        with self.slot.aside() if self.slot is not None else nullcontext():
            result = self._child(task, path)
        self.spend.debit(result.usage)
        return result

    def _child(self, task: str, path: str) -> DelegateResult:
        return delegate(
            task,
            path,
            parent_bus=self.bus,
            spawn=self.spawn,
            max_identical_calls=self.limits.max_identical_calls,
            lim=DelegateLimits.of(self.cfg),
            parent_cancel=self.cancel,
            parent_left=self.spend.left(self.limits.max_turn_tokens),
        )
