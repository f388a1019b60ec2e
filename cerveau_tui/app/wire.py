"""Where a bus event becomes a typed payload for the widgets: ONE table, ONE function.

The event stays a plain dict on the wire (what `cerveau run --json` prints is what the app got);
here it is validated once into its payload model from protocol.py, so the router (routing.py)
can `match` on the payload's class and the widgets read fields, not `.get()` chains that hide a
renamed field as a silent default. An event type with no model yet stays `Untyped`: its dict,
kept with its type. A payload that does not fit its model stays `Untyped` too, with the problem
named, so the chat can say so instead of dropping a tool card without a word.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..protocol import (
    ApprovalRequested,
    ApprovalResolved,
    BudgetNotice,
    Compacted,
    ErrorPayload,
    Event,
    EventType,
    GuardTripped,
    Payload,
    PolishPayload,
    ReminderPayload,
    ReplyProgress,
    ToolCallPayload,
    ToolResultPayload,
    ToolStartedPayload,
    TurnEnded,
    TurnStarted,
    UsagePayload,
)

#: The event types the app reads as models. Others (steer, notice, verification, ...)
#: have no model in protocol.py yet and reach the router as `Untyped`.
PAYLOAD_MODELS: dict[str, type[Payload]] = {
    EventType.TURN_STARTED: TurnStarted,
    EventType.TOOL_CALL: ToolCallPayload,
    EventType.TOOL_STARTED: ToolStartedPayload,
    EventType.TOOL_RESULT: ToolResultPayload,
    EventType.APPROVAL_REQUESTED: ApprovalRequested,
    EventType.APPROVAL_RESOLVED: ApprovalResolved,
    EventType.USAGE: UsagePayload,
    EventType.REPLY_PROGRESS: ReplyProgress,
    EventType.ERROR: ErrorPayload,
    EventType.GUARD_TRIPPED: GuardTripped,
    EventType.TURN_ENDED: TurnEnded,
    EventType.COMPACTED: Compacted,
    EventType.BUDGET_NOTICE: BudgetNotice,
    EventType.REMINDER: ReminderPayload,
    EventType.POLISH: PolishPayload,
}


@dataclass(frozen=True)
class Untyped:
    """An event the app reads as its dict: no model for its type, or a payload that did not fit."""

    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    problem: str = ""  # why the payload did not validate against its model; "" when it had none


def typed(event: Event) -> Payload | Untyped:
    model = PAYLOAD_MODELS.get(event.type)
    if model is None:
        return Untyped(event.type, event.payload)
    try:
        return model.model_validate(event.payload)
    except ValidationError as exc:
        fields = ", ".join(".".join(str(x) for x in e["loc"]) or "?" for e in exc.errors())
        return Untyped(event.type, event.payload, f"does not fit {model.__name__} ({fields})")
