"""The envelope every event travels in, the payload models' registry (the closed list of event
types), and the vocabularies that more than one event (and more than one client) speak: a call's
status, a turn's stop reason."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr


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
    BLOCKED = "blocked"  # a person's user_prompt hook refused the prompt (person_hooks/)
    ERROR = "error"


class Payload(BaseModel):
    """One event's payload. Closed: a field nobody declared is refused where it is built, not
    discovered by a reader guessing keys (the chat said "lessons learnt this turn: 0" for a month
    because the hook sent `stored` and the reader wanted `count`)."""

    model_config = ConfigDict(extra="forbid")

    #: The event type this payload travels as: each model names its own, and that is the one
    #: place a type is written (the registry below, `EventType` and the Emitter derive from it).
    event_type: ClassVar[str]
    #: Dump only the fields that were set: the wire keeps "absent" apart from "empty" (a turn
    #: without the gate has no `verification` key, not `null`).
    sparse: ClassVar[bool] = False

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: object) -> None:
        """Each model registers as it is defined. Before, a type was written five times (an enum
        member, the class, an import, a table row, `__all__`), and a model left out of the table
        was an event no reader could parse."""
        super().__pydantic_init_subclass__(**kwargs)
        name = cls.__dict__.get("event_type")
        if not isinstance(name, str) or not name:
            raise TypeError(f"{cls.__name__} names no event_type: every payload travels as one")
        if name in EVENT_MODELS:
            raise TypeError(
                f"{name!r} has two payload models: {EVENT_MODELS[name].__name__}, {cls}"
            )
        EVENT_MODELS[name] = cls

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=self.sparse)


#: Every event type -> its one payload model, filled as the models are defined (acceptance checks
#: use this name). Complete once `cerveau_tui.protocol` is imported: its __init__ imports them all.
EVENT_MODELS: dict[str, type[Payload]] = {}


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
