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

from ..protocol import Event, Payload, UnknownEvent, payload_model


@dataclass(frozen=True)
class Untyped:
    """An event the app reads as its dict: no model for its type, or a payload that did not fit."""

    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    problem: str = ""  # why the payload did not validate against its model; "" when it had none


def typed(event: Event) -> Payload | Untyped:
    """Every event type is read as its model (the protocol is closed); only an event whose type is
    outside the protocol, or whose payload does not fit (a log from another version), is Untyped."""
    if event._data is not None:  # built typed by the emitter: read as built
        return event._data
    try:
        model = payload_model(event.type)
    except UnknownEvent:
        return Untyped(event.type, event.payload)
    try:
        return model.model_validate(event.payload)
    except ValidationError as exc:
        fields = ", ".join(".".join(str(x) for x in e["loc"]) or "?" for e in exc.errors())
        return Untyped(event.type, event.payload, f"does not fit {model.__name__} ({fields})")
