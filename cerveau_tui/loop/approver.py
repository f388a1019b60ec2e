"""The Approver: how a boundary crossing gets a person's decision.

Denying on timeout is the approver's responsibility, not the loop's: with nobody to ask, the only
alternative to denying would be granting in silence.

ONE countdown, this one, started when the person was notified: a dialog that opened minutes into
a turn the person had stopped watching, then denied after 120 s with no bell, was a timeout they
never heard about. The client calls `notified(request_id)` when it shows the request (and rings:
app/attention.py); the deadline is `timeout_s` from then, and the client displays
`seconds_left`, it keeps no clock of its own.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..bus import Emitter
from ..protocol import ApprovalRequested, ApprovalResolved

# `approved_always` / `denied_always`: a lasting rule for this workspace ("always" / "never"),
# kept outside it (policy/rules_store.py).
Decision = Literal[
    "approved", "approved_session", "approved_always", "denied", "denied_always", "stopped"
]
_BY = ("person", "policy", "timeout", "session_grant", "headless")


@dataclass
class ApprovalRequest:
    call_id: str
    tool: str
    summary: str  # the command, or the path(s) written
    reason: str  # why it crosses the boundary, for a person
    paths: list[str] = field(default_factory=list)
    diff: str | None = None
    scope: str = ""  # what "approve for session" covers, spelled out
    # Every scope the person could choose, (scope_key, scope) narrowest first; `scope` is one.
    choices: list[tuple[str, str]] = field(default_factory=list)
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    outside_turn: bool = False  # the person's own `!cmd`: no turn to stop


@dataclass
class ApprovalDecision:
    decision: Decision
    reason: str = ""
    by: str = "person"
    scope_key: str = ""  # the choice the person picked (ApprovalRequest.choices); "": `scope`

    @property
    def approved(self) -> bool:
        return self.decision in ("approved", "approved_session", "approved_always")


class Approver(Protocol):
    def approve(self, req: ApprovalRequest) -> ApprovalDecision: ...


class Countdown(Protocol):
    """What a client showing requests needs from the approver's one countdown."""

    def notified(self, request_id: str) -> None: ...
    def seconds_left(self, request_id: str) -> float | None: ...


#: How often a waiting request looks at the (injected) clock again; a notice or an answer wakes
#: it at once. Bounds how late a timeout lands, not how long anyone waits.
POLL_S = 0.25


@dataclass
class _Slot:
    asked_at: float
    deadline: float | None = None  # set when the person was notified
    decisions: list[ApprovalDecision] = field(default_factory=list)


class DenyAll:
    """Headless default: nobody is there, so every crossing is denied (and said so)."""

    def __init__(self, reason: str = "no one is there to approve (headless run)") -> None:
        self.reason = reason

    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision("denied", self.reason, by="headless")


class ApproveAll:
    """`--yes` under full-access only."""

    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision("approved", by="headless")


class BusApprover:
    """Publishes `approval_requested` on the bus and waits for a client to call `resolve`.

    Every request gets its own slot, so several pending requests queue and none is lost. The wait
    ends with a denial on timeout or when `cancel_all` is called (interrupt, quit). A request not
    shown yet (queued behind another) waits while the person is busy with the others: its
    fallback deadline is `timeout_s` after the last notice or answer, so with no client at all
    it is still denied `timeout_s` after it was asked.
    """

    def __init__(
        self, bus: Emitter, timeout_s: float = 120.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.bus = bus
        self.timeout_s = timeout_s
        self._clock = clock
        self._pending: dict[str, _Slot] = {}
        self._cond = threading.Condition()
        self._active_at = clock()  # the last notice or answer: the person is busy with a dialog

    def _deadline(self, slot: _Slot) -> float:
        if slot.deadline is not None:
            return slot.deadline
        return max(slot.asked_at, self._active_at) + self.timeout_s

    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        slot = _Slot(asked_at=self._clock())
        with self._cond:
            self._pending[req.request_id] = slot
        self.bus.emit(requested(req, self.timeout_s))
        with self._cond:
            while not slot.decisions:
                left = self._deadline(slot) - self._clock()
                if left <= 0:
                    break
                self._cond.wait(min(left, POLL_S))
            self._pending.pop(req.request_id, None)
            self._active_at = max(self._active_at, self._clock())
            self._cond.notify_all()
        if slot.decisions:
            return slot.decisions[0]
        return ApprovalDecision("denied", f"no answer within {self.timeout_s:g} s", by="timeout")

    def notified(self, request_id: str) -> None:
        """The person was shown this request (and rung): its countdown starts now, once."""
        with self._cond:
            slot = self._pending.get(request_id)
            if slot is None or slot.deadline is not None:
                return
            now = self._clock()
            slot.deadline = now + self.timeout_s
            self._active_at = max(self._active_at, now)
            self._cond.notify_all()

    def seconds_left(self, request_id: str) -> float | None:
        """Until the approver denies this request by itself; None once it is no longer waiting."""
        with self._cond:
            slot = self._pending.get(request_id)
            if slot is None or slot.decisions:
                return None
            return self._deadline(slot) - self._clock()

    def resolve(self, request_id: str, decision: ApprovalDecision) -> bool:
        with self._cond:
            slot = self._pending.get(request_id)
            if slot is None or slot.decisions:
                return False
            slot.decisions.append(decision)
            self._active_at = max(self._active_at, self._clock())
            self._cond.notify_all()
        return True

    def cancel_all(self, reason: str = "interrupted") -> None:
        with self._cond:
            ids = list(self._pending)
        for rid in ids:
            self.resolve(rid, ApprovalDecision("stopped", reason, by="person"))

    @property
    def pending(self) -> list[str]:
        with self._cond:
            return list(self._pending)


def requested(req: ApprovalRequest, timeout_s: float) -> ApprovalRequested:
    """The request as its event: every approver that asks someone puts it on the bus (the log
    holds the question beside its answer), whoever shows it (the TUI's dialog, an ACP client)."""
    return ApprovalRequested(
        request_id=req.request_id,
        call_id=req.call_id,
        tool=req.tool,
        summary=req.summary,
        reason=req.reason,
        paths=req.paths,
        diff=req.diff,
        scope=req.scope,
        choices=[list(c) for c in req.choices],
        timeout_s=timeout_s,
        outside_turn=req.outside_turn,
    )


def resolved_event(
    bus: Emitter, req: ApprovalRequest, decision: ApprovalDecision, scope: str = ""
) -> None:
    """`scope`: what the grant covers, when the decision granted one for longer than this call."""
    approval_resolved(
        bus,
        request_id=req.request_id,
        call_id=req.call_id,
        decision=decision.decision,
        reason=decision.reason,
        by=decision.by,
        scope=scope,
    )


def approval_resolved(
    bus: Emitter,
    *,
    request_id: str,
    call_id: str,
    decision: str,
    reason: str,
    by: str,
    scope: str = "",
) -> None:
    bus.emit(
        ApprovalResolved(
            request_id=request_id,
            call_id=call_id,
            decision=decision,  # type: ignore[arg-type]
            reason=reason,
            by=by if by in _BY else "person",  # type: ignore[arg-type]
            scope=scope,
        ),
    )
