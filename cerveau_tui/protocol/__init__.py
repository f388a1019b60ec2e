"""Events that cross the bus, and the payloads that travel in them: a CLOSED protocol.

Every client (the TUI, the headless runner, a test) sees a session only through these. An event
is `type`, `session_id`, `turn_id`, `seq`, `ts` and a `payload`. Every event type has exactly one
payload model (`EVENT_MODELS`), every model forbids fields it does not declare, and the Emitter
takes the model and derives the type from it: a payload is built typed where it is said and read
typed where it is shown, and the JSON line `cerveau run --json` prints is what the model dumped.
Before, 53 of 81 emits sent dict literals, 23 types had no model, and readers guessed keys.

A type is written once, by its model (`event_type = "turn_ended"` in its class): the models
register as they are defined (base.Payload), this package re-exports every model of its modules,
and `EventType` is derived from the registry. The package names a type by its model
(`TurnEnded.event_type`); scripts and tests may spell it `EventType.TURN_ENDED`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

# Every model of these modules, re-exported whole: a new model is public where it is written.
from .base import *  # noqa: F403
from .base import EVENT_MODELS, Event, Payload, StopReason
from .gate import *  # noqa: F403
from .person_hooks import *  # noqa: F403
from .tools import *  # noqa: F403
from .turn import *  # noqa: F403

#: The event types as an enum, derived from the models: `EventType.TURN_ENDED == "turn_ended"`.
EventType = StrEnum("EventType", {t.upper(): t for t in EVENT_MODELS})  # type: ignore[misc]


class UnknownEvent(ValueError):
    """An event type outside the protocol: a typo at the emitter, or a log from another version."""


def payload_model(event_type: str) -> type[Payload]:
    try:
        return EVENT_MODELS[event_type]
    except KeyError:
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
