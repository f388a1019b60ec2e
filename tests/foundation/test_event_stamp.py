"""The bus stamps every event with its injected clock, and only the bus does."""

from __future__ import annotations

from cerveau_tui.bus import Emitter, Recorder


def test_each_event_is_stamped_with_the_emitters_clock_as_a_float() -> None:
    ticks = iter([100, 101.5])
    bus = Emitter("s", clock=lambda: next(ticks))
    rec = Recorder(bus)
    bus.emit("notice", {"text": "a"})
    bus.emit("notice", {"text": "b"})
    assert [e.ts for e in rec.events] == [100.0, 101.5]
    assert all(type(e.ts) is float for e in rec.events)


def test_the_stamp_is_on_the_wire_form_of_the_event() -> None:
    bus = Emitter("s", clock=lambda: 1_700_000_000.25)
    ev = bus.emit("notice", {"text": "a"})
    assert '"ts":1700000000.25' in ev.model_dump_json()
