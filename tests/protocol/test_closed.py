"""The protocol is closed: one payload model per event type, no field nobody declared, and the
bus derives the type from the model (and holds a transitional dict to the same rules)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.protocol import (
    EVENT_MODELS,
    EventType,
    NoticePayload,
    Payload,
    TurnEnded,
    UnknownEvent,
    payload_of,
)


def test_every_event_type_has_exactly_one_payload_model() -> None:
    assert set(EVENT_MODELS) == set(EventType)
    assert all(model.event_type == t for t, model in EVENT_MODELS.items())


def test_a_second_model_for_a_type_is_refused_where_it_is_written() -> None:
    with pytest.raises(TypeError, match="two payload models"):

        class AnotherNotice(Payload):
            event_type = "notice"

    assert EVENT_MODELS["notice"] is NoticePayload


def test_a_model_that_names_no_type_is_refused_where_it_is_written() -> None:
    with pytest.raises(TypeError, match="names no event_type"):

        class Nameless(Payload):
            text: str = ""


@pytest.mark.parametrize("event_type", list(EventType))
def test_every_payload_model_forbids_undeclared_fields(event_type: EventType) -> None:
    assert EVENT_MODELS[event_type].model_config.get("extra") == "forbid"


def test_emit_takes_a_model_and_derives_the_type() -> None:
    bus = Emitter()
    event = bus.emit(NoticePayload(text="hello"))
    assert event.type == "notice" and event.payload["text"] == "hello"
    assert isinstance(event.ts, float)
    assert payload_of(event) == NoticePayload(text="hello")


def test_a_dict_payload_with_an_undeclared_field_is_refused_at_the_emitter() -> None:
    bus = Emitter()
    seen = Recorder(bus)
    with pytest.raises(ValidationError):
        bus.emit(EventType.NOTICE, {"text": "criteria met", "banner": True})
    assert seen.events == []  # nothing half-said reaches a client


def test_an_event_type_outside_the_protocol_is_refused() -> None:
    with pytest.raises(UnknownEvent):
        Emitter().emit("made_up", {})


def test_a_model_sent_under_another_type_is_refused() -> None:
    with pytest.raises(ValueError):
        Emitter().emit(EventType.ERROR, NoticePayload(text="x"))


def test_turn_ended_keeps_unsaid_fields_off_the_wire() -> None:
    event = Emitter().emit(TurnEnded(reason="completed", iterations=1))
    assert "verification" not in event.payload and event.payload["reason"] == "completed"
