"""The bridge between the bus (engine thread) and the app (UI thread).

Subscribers run on the emitting thread, so the bridge never touches a widget: it appends to an
ordered outbox under a lock and posts one `Wake` when the outbox was empty. The app drains the
whole outbox in order on the UI thread. Text fragments merge into the previous item when it is
text of the same kind, which is the coalescing: however fast tokens arrive, the UI sees one
`StreamText` per drain. Order is kept across kinds (text, then the tool call that followed it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import fields, replace

from ..protocol import Event, ReasoningPayload, TokenPayload
from ..text_safety import visible, visible_data
from .messages import EngineEvent, Item, StreamText, Wake

_TEXT_KINDS = {TokenPayload.event_type: "answer", ReasoningPayload.event_type: "reasoning"}


def _shown(item: Item) -> Item:
    """The item with its text's terminal controls shown as escapes: everything the UI draws
    from the engine (the model's replies, tool arguments and output, a stored session's
    transcript) passes here. A copy: the event object is also the session log's."""
    if isinstance(item, EngineEvent):
        event = getattr(item, "event", None)  # an item built without one has nothing to show
        if event is None:
            return item
        return EngineEvent(event.model_copy(update={"payload": visible_data(event.payload)}))
    if isinstance(item, StreamText):
        return StreamText(item.kind, visible(item.text), item.fragments)
    return replace(item, **{f.name: visible_data(getattr(item, f.name)) for f in fields(item)})


class Bridge:
    def __init__(self, post: Callable[[Wake], object]) -> None:
        self._post = post  # App.post_message: thread-safe
        self._lock = threading.Lock()
        self._outbox: list[Item] = []
        self._woken = False  # a Wake is in the app's queue, not handled yet
        self._deferred = False  # the app holds a timer that will drain the outbox
        self.closed = False

    # --- engine side (any thread) -----------------------------------------------------------
    def __call__(self, event: Event) -> None:
        kind = _TEXT_KINDS.get(event.type)
        if kind is not None:
            self.put_text(kind, str(event.payload.get("text", "")))
        else:
            self.put(EngineEvent(event))

    def put_text(self, kind: str, text: str) -> None:
        if not text:
            return
        text = visible(text)  # the model's bytes: shown, never acted on (text_safety.py)
        with self._lock:
            last = self._outbox[-1] if self._outbox else None
            if isinstance(last, StreamText) and last.kind == kind:
                last.text += text
                last.fragments += 1
            else:
                self._outbox.append(StreamText(kind, text))
            # While a coalescing timer is pending, text waits for it: no message per token.
            wake = not self._woken and not self._deferred
            self._woken = self._woken or wake
        if wake:
            self._wake()

    def put(self, item: Item) -> None:
        item = _shown(item)
        with self._lock:
            self._outbox.append(item)
            wake = not self._woken
            self._woken = True
        if wake:
            self._wake()

    def _wake(self) -> None:
        if self.closed:
            return
        try:
            self._post(Wake())
        except Exception:  # the app is shutting down; the outbox is dropped with it
            self.closed = True

    # --- UI side -----------------------------------------------------------------------------
    def take_wake(self) -> bool:
        """Acknowledge a Wake; returns True when only text is pending (a drain may wait)."""
        with self._lock:
            self._woken = False
            return all(isinstance(i, StreamText) for i in self._outbox)

    def defer(self) -> None:
        """The app set a coalescing timer: text must not wake it until the timer drains."""
        with self._lock:
            self._deferred = True

    def drain(self) -> list[Item]:
        with self._lock:
            items, self._outbox = self._outbox, []
            self._deferred = False
        return items
