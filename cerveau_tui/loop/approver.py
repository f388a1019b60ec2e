"""The Approver: how a boundary crossing gets a person's decision.

Denying on timeout is the approver's responsibility, not the loop's: with nobody to ask, the only
alternative to denying would be granting in silence.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..bus import Emitter
from ..protocol import ApprovalRequested, EventType
from .events import approval_resolved

Decision = Literal["approved", "approved_session", "denied", "stopped"]


@dataclass
class ApprovalRequest:
    call_id: str
    tool: str
    summary: str  # the command, or the path(s) written
    reason: str  # why it crosses the boundary, for a person
    paths: list[str] = field(default_factory=list)
    diff: str | None = None
    scope: str = ""  # what "approve for session" covers, spelled out
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])


@dataclass
class ApprovalDecision:
    decision: Decision
    reason: str = ""
    by: str = "person"

    @property
    def approved(self) -> bool:
        return self.decision in ("approved", "approved_session")


class Approver(Protocol):
    def approve(self, req: ApprovalRequest) -> ApprovalDecision: ...


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
    ends with a denial on timeout or when `cancel_all` is called (interrupt, quit).
    """

    def __init__(self, bus: Emitter, timeout_s: float = 120.0) -> None:
        self.bus = bus
        self.timeout_s = timeout_s
        self._pending: dict[str, tuple[threading.Event, list[ApprovalDecision]]] = {}
        self._lock = threading.Lock()

    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        done = threading.Event()
        box: list[ApprovalDecision] = []
        with self._lock:
            self._pending[req.request_id] = (done, box)
        self.bus.emit(
            EventType.APPROVAL_REQUESTED,
            ApprovalRequested(
                request_id=req.request_id,
                call_id=req.call_id,
                tool=req.tool,
                summary=req.summary,
                reason=req.reason,
                paths=req.paths,
                diff=req.diff,
                scope=req.scope,
                timeout_s=self.timeout_s,
            ),
        )
        if done.wait(self.timeout_s) and box:
            decision = box[0]
        else:
            decision = ApprovalDecision(
                "denied", f"no answer within {self.timeout_s:g} s", by="timeout"
            )
        with self._lock:
            self._pending.pop(req.request_id, None)
        return decision

    def resolve(self, request_id: str, decision: ApprovalDecision) -> bool:
        with self._lock:
            slot = self._pending.get(request_id)
        if slot is None:
            return False
        slot[1].append(decision)
        slot[0].set()
        return True

    def cancel_all(self, reason: str = "interrupted") -> None:
        with self._lock:
            ids = list(self._pending)
        for rid in ids:
            self.resolve(rid, ApprovalDecision("stopped", reason, by="person"))

    @property
    def pending(self) -> list[str]:
        with self._lock:
            return list(self._pending)


def resolved_event(bus: Emitter, req: ApprovalRequest, decision: ApprovalDecision) -> None:
    approval_resolved(
        bus,
        request_id=req.request_id,
        call_id=req.call_id,
        decision=decision.decision,
        reason=decision.reason,
        by=decision.by,
    )
