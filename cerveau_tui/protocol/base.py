"""The envelope every event travels in, the closed list of event types, and the vocabularies that
more than one event (and more than one client) speak: a call's status, a turn's stop reason."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr


class EventType(StrEnum):
    SESSION_STARTED = "session_started"
    TURN_STARTED = "turn_started"
    ITERATION_STARTED = "iteration_started"
    TOKEN = "token"  # a fragment of the assistant's visible answer
    REASONING = "reasoning"  # a fragment of reasoning content, kept apart
    ASSISTANT_MESSAGE = "assistant_message"  # the whole reply of one model call
    REPLY_PROGRESS = "reply_progress"  # where a streaming reply stands (throttled by the loop)
    TOOL_CALL = "tool_call"
    TOOL_STARTED = "tool_started"
    TOOL_RESULT = "tool_result"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_RESOLVED = "approval_resolved"
    USAGE = "usage"
    ERROR = "error"
    NOTICE = "notice"  # a line for the person (disclosures, retries)
    STEER = "steer"  # what the person typed while a turn ran, handed to the loop
    USER_EXEC = "user_exec"  # a `!` command the person ran
    GUARD_TRIPPED = "guard_tripped"
    PLAN_COMMITTED = "plan_committed"
    PLAN_UPDATED = "plan_updated"
    CHECKPOINT = "checkpoint"
    DRIFT = "drift"
    PLAN_REPORT = "plan_report"  # the plan ledger's reconciled report, for the views to render
    TOUCHED_PROTECTED = "touched_protected"
    CHECK_STARTED = "check_started"  # the done check started running (it may take minutes)
    CHECK = "check"  # done criteria were checked
    ESCALATION = "escalation"
    PARKED = "parked"
    ROLLBACK = "rollback"
    VERIFICATION = "verification"
    STACK_PROGRESS = "stack_progress"
    UNDO = "undo"
    REWOUND = "rewound"  # the workspace and/or conversation went back to a restore point
    DELEGATED = "delegated"
    COMPACTED = "compacted"  # the window was compacted (context/window.py)
    BUDGET_NOTICE = "budget_notice"  # occupancy crossed 70% or 90% of the window
    REMINDER = "reminder"  # what changed mid-session, appended for the model's next request
    POLISH = "polish"  # the bounded tidy round after a green gate, and what became of it
    LESSONS = "lessons"  # failure-to-fix pairs mined at the end of a turn
    SESSION_RESUMED = "session_resumed"  # this session continues an earlier one
    TURN_ENDED = "turn_ended"


class CallStatus(StrEnum):
    """Where one tool call stands, from the model's emission to its card: ONE vocabulary.

    Before, the schedule said pending/done/failed/denied, `tool_started` waiting/running, the
    result done/failed/denied/guarded and the card queued/...: four lists for one fact, and a
    status one of them lacked was shown as nothing."""

    QUEUED = "queued"  # emitted by the model, not yet started
    WAITING = "waiting"  # waiting for the person's approval
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    DENIED = "denied"  # the person, or the policy, refused it
    GUARDED = "guarded"  # the loop did not run it (the repeat guard): not the person refusing


class StopReason(StrEnum):
    """Why a turn ended: `turn_ended.reason`, the engine's Outcome, the status bar and the chat."""

    COMPLETED = "completed"  # the model answered without calling a tool (and the gate settled)
    INTERRUPTED = "interrupted"
    STOPPED = "stopped"  # the person pressed Esc on an approval
    MAX_ITERATIONS = "max_iterations"
    REPEAT = "repeat"
    STALLED = "stalled"
    INCOMPLETE = "incomplete"
    PARKED = "parked"
    TOKEN_CEILING = "token_ceiling"
    ERROR = "error"


class Payload(BaseModel):
    """One event's payload. Closed: a field nobody declared is refused where it is built, not
    discovered by a reader guessing keys (the chat said "lessons learnt this turn: 0" for a month
    because the hook sent `stored` and the reader wanted `count`)."""

    model_config = ConfigDict(extra="forbid")

    #: The event type this payload travels as; the Emitter derives `Event.type` from it.
    event_type: ClassVar[EventType]
    #: Dump only the fields that were set: the wire keeps "absent" apart from "empty" (a turn
    #: without the gate has no `verification` key, not `null`).
    sparse: ClassVar[bool] = False

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=self.sparse)


class Event(BaseModel):
    """`type`, `session_id`, `turn_id`, `seq`, `ts` and the `payload` as its model dumped it: a
    JSON line printed by `cerveau run --json` is exactly the event a widget received. `data` is
    the payload as its model, for readers that read typed (kept from the emit, never re-parsed)."""

    model_config = ConfigDict(frozen=True)

    type: str
    session_id: str
    turn_id: str = ""
    seq: int
    #: When the bus stamped it: seconds since the epoch (bus.Emitter's clock). None only for an
    #: event not from a bus (a log written before events carried it, a report's rebuilt record):
    #: an unknown time is said as unknown, never invented as "now" or 0.
    ts: float | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    _data: Payload | None = PrivateAttr(default=None)
