"""The Emitter: an in-process, thread-safe publish/subscribe bus.

The loop never writes to a terminal. It emits facts here, and every client subscribes: the TUI
posts them to its UI thread, the headless runner prints them, the session log appends them, a test
collects them. Subscribers are called synchronously on the emitting thread, in subscription order,
with the sequence number assigned under one lock, so every subscriber sees the same order.

Every event is stamped here, and only here (`ts`, seconds since the epoch, from the injected
clock): a `cerveau run --json` line and the session log's line are the same object, and a person
reading either had no way to tell a slow model call from a slow tool without it.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from .protocol import Event, Payload, parse_payload

Subscriber = Callable[[Event], None]


class Emitter:
    def __init__(
        self, session_id: str | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self._lock = threading.RLock()
        self._subscribers: list[Subscriber] = []
        self._seq = 0
        self._clock = clock
        self.turn_id = ""
        self.errors: list[BaseException] = []

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it."""
        with self._lock:
            self._subscribers.append(fn)

        def unsubscribe() -> None:
            with self._lock:
                if fn in self._subscribers:
                    self._subscribers.remove(fn)

        return unsubscribe

    def emit(
        self,
        event: Payload | str,
        payload: Payload | dict[str, Any] | None = None,
        *,
        turn_id: str | None = None,
    ) -> Event:
        """Publish one fact: `emit(SomePayload(...))`; the type comes from the model.

        The older `emit(type, dict)` still works (tests, a log replayed), but the dict is
        validated against the type's model as strictly as a built one: an unknown type or a
        field the model does not declare raises here, at the speaker, not in a reader."""
        model = self._model(event, payload)
        data = model.wire()
        with self._lock:
            self._seq += 1
            # Built, not validated: every field is ours and typed here, and the payload is what
            # its model dumped (validating the envelope again cost more than the payload did).
            ev = Event.model_construct(
                type=str(model.event_type),
                session_id=self.session_id,
                turn_id=self.turn_id if turn_id is None else turn_id,
                seq=self._seq,
                ts=float(self._clock()),
                payload=data,
            )
            ev._data = model
            subscribers = list(self._subscribers)
            # Delivery stays under the lock so two threads emitting at once cannot interleave
            # their events differently for different subscribers.
            for fn in subscribers:
                try:
                    fn(ev)
                except Exception as exc:  # a broken client must not break the loop
                    self.errors.append(exc)
        return ev

    @staticmethod
    def _model(event: Payload | str, payload: Payload | dict[str, Any] | None) -> Payload:
        if isinstance(event, Payload):
            if payload is not None:
                raise TypeError("emit(model) takes no second payload")
            return event
        if isinstance(payload, Payload):
            if payload.event_type != event:
                raise ValueError(
                    f"a {type(payload).__name__} travels as {payload.event_type}, not {event}"
                )
            return payload
        return parse_payload(event, dict(payload or {}))

    @property
    def seq(self) -> int:
        return self._seq

    def continue_from(self, seq: int) -> None:
        """Number the next event after `seq`: a resumed session goes on with its log's numbering
        (two events with one seq in one log would make the report's order ambiguous)."""
        with self._lock:
            self._seq = max(self._seq, seq)


class Recorder:
    """A subscriber that keeps every event; handy for tests and for the session log."""

    def __init__(self, bus: Emitter | None = None) -> None:
        self.events: list[Event] = []
        self._lock = threading.Lock()
        if bus is not None:
            bus.subscribe(self)

    def __call__(self, event: Event) -> None:
        with self._lock:
            self.events.append(event)

    def of(self, type: str) -> list[Event]:
        with self._lock:
            return [e for e in self.events if e.type == type]
