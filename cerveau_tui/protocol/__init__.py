"""Events that cross the bus, and the payloads that travel in them: a CLOSED protocol.

Every client (the TUI, the headless runner, a test) sees a session only through these. An event
is `type`, `session_id`, `turn_id`, `seq`, `ts` and a `payload`. Every event type has exactly one
payload model (`EVENT_MODELS`), every model forbids fields it does not declare, and the Emitter
takes the model and derives the type from it: a payload is built typed where it is said and read
typed where it is shown, and the JSON line `cerveau run --json` prints is what the model dumped.
Before, 53 of 81 emits sent dict literals, 23 types had no model, and readers guessed keys.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .base import CallStatus, Event, EventType, Payload, StopReason
from .gate import (
    CheckPayload,
    CheckpointPayload,
    CheckStarted,
    Drift,
    Escalation,
    LessonsPayload,
    Parked,
    PlanCommitted,
    PlanReported,
    PlanUpdated,
    PolishPayload,
    Rollback,
    StoredLesson,
    TouchedProtected,
    VerificationPayload,
)
from .tools import (
    ApprovalRequested,
    ApprovalResolved,
    Delegated,
    Rewound,
    ToolCallPayload,
    ToolResultPayload,
    ToolStartedPayload,
    UndoPayload,
    UserExec,
)
from .turn import (
    AssistantMessage,
    BudgetNotice,
    Compacted,
    ErrorPayload,
    GuardTripped,
    IterationStarted,
    NoticePayload,
    ReasoningPayload,
    ReminderPayload,
    ReplyProgress,
    SessionResumed,
    SessionStarted,
    StackProgress,
    Steer,
    TokenPayload,
    TurnEnded,
    TurnStarted,
    UsagePayload,
)

_MODELS: tuple[type[Payload], ...] = (
    SessionStarted,
    TurnStarted,
    IterationStarted,
    TokenPayload,
    ReasoningPayload,
    AssistantMessage,
    ReplyProgress,
    ToolCallPayload,
    ToolStartedPayload,
    ToolResultPayload,
    ApprovalRequested,
    ApprovalResolved,
    UsagePayload,
    ErrorPayload,
    NoticePayload,
    Steer,
    UserExec,
    GuardTripped,
    PlanCommitted,
    PlanReported,
    PlanUpdated,
    CheckpointPayload,
    Drift,
    TouchedProtected,
    CheckStarted,
    CheckPayload,
    Escalation,
    Parked,
    Rollback,
    VerificationPayload,
    StackProgress,
    UndoPayload,
    Rewound,
    Delegated,
    Compacted,
    BudgetNotice,
    ReminderPayload,
    PolishPayload,
    LessonsPayload,
    SessionResumed,
    TurnEnded,
)

#: Every event type -> its one payload model (acceptance checks use this name).
EVENT_MODELS: dict[EventType, type[Payload]] = {m.event_type: m for m in _MODELS}
assert set(EVENT_MODELS) == set(EventType), "every event type has exactly one payload model"


class UnknownEvent(ValueError):
    """An event type outside the protocol: a typo at the emitter, or a log from another version."""


def payload_model(event_type: str) -> type[Payload]:
    try:
        return EVENT_MODELS[EventType(event_type)]
    except ValueError:
        raise UnknownEvent(f"no event type {event_type!r} in the protocol") from None


def parse_payload(event_type: str, payload: dict[str, Any]) -> Payload:
    """The payload of a stored or transitional dict, validated strictly against its model
    (raises UnknownEvent or pydantic's ValidationError)."""
    return payload_model(event_type).model_validate(payload)


def payload_of(event: Event) -> Payload:
    """The event's payload as its model: the one the emitter built, else parsed from the dict
    (an event read back from a log)."""
    data = event._data
    if data is None:
        data = parse_payload(event.type, event.payload)
        event._data = data  # cached (a private attribute: the event's fields stay frozen)
    return data


#: Reasons a turn ends with (StopReason's members, by their old names).
TURN_COMPLETED = StopReason.COMPLETED
TURN_INTERRUPTED = StopReason.INTERRUPTED
TURN_STOPPED = StopReason.STOPPED
TURN_MAX_ITERATIONS = StopReason.MAX_ITERATIONS
TURN_REPEAT = StopReason.REPEAT
TURN_STALLED = StopReason.STALLED
TURN_INCOMPLETE = StopReason.INCOMPLETE
TURN_PARKED = StopReason.PARKED
TURN_TOKEN_CEILING = StopReason.TOKEN_CEILING
TURN_ERROR = StopReason.ERROR

__all__ = [
    "EVENT_MODELS",
    "ApprovalRequested",
    "ApprovalResolved",
    "AssistantMessage",
    "BudgetNotice",
    "CallStatus",
    "CheckPayload",
    "CheckStarted",
    "CheckpointPayload",
    "Compacted",
    "Delegated",
    "Drift",
    "ErrorPayload",
    "Escalation",
    "Event",
    "EventType",
    "GuardTripped",
    "IterationStarted",
    "LessonsPayload",
    "NoticePayload",
    "Parked",
    "Payload",
    "PlanCommitted",
    "PlanReported",
    "PlanUpdated",
    "PolishPayload",
    "ReasoningPayload",
    "ReminderPayload",
    "ReplyProgress",
    "Rollback",
    "SessionResumed",
    "SessionStarted",
    "StackProgress",
    "Steer",
    "StopReason",
    "StoredLesson",
    "TokenPayload",
    "ToolCallPayload",
    "ToolResultPayload",
    "ToolStartedPayload",
    "TouchedProtected",
    "TurnEnded",
    "TurnStarted",
    "Rewound",
    "UndoPayload",
    "UnknownEvent",
    "UsagePayload",
    "UserExec",
    "ValidationError",
    "VerificationPayload",
    "parse_payload",
    "payload_model",
    "payload_of",
    "TURN_COMPLETED",
    "TURN_ERROR",
    "TURN_INCOMPLETE",
    "TURN_INTERRUPTED",
    "TURN_MAX_ITERATIONS",
    "TURN_PARKED",
    "TURN_REPEAT",
    "TURN_STALLED",
    "TURN_STOPPED",
    "TURN_TOKEN_CEILING",
]
