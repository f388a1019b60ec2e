"""Typed messages from the engine side to the UI thread.

The bus calls subscribers on the engine's worker thread; the bridge (bridge.py) turns each event
into one of these and the app applies them in order on the UI thread. Streamed text is the one
exception to one-message-per-event: fragments are merged into a single `StreamText` so that a
1,000 tokens/s reply costs ~20 widget updates a second, not 1,000 (measured: per-token updates
starve the keyboard, see shared/reference/textual.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from textual.message import Message

from ..protocol import Event


class Wake(Message):
    """Posted by the bridge when its outbox goes from empty to non-empty."""


@dataclass
class StreamText:
    kind: str  # "answer" | "reasoning"
    text: str
    # The bus fragments merged into it (about one token each): the status bar counts the tokens
    # between two reply_progress events with it (16 apart: 50 s on a 0.3 tok/s server).
    fragments: int = field(default=1, compare=False)


@dataclass
class EngineEvent:
    """Any bus event other than a text fragment, kept whole (the widgets read its payload)."""

    event: Event

    @property
    def type(self) -> str:
        return self.event.type

    @property
    def payload(self) -> dict[str, Any]:
        return self.event.payload


@dataclass
class Provisioning:
    """A line of start-up progress (the managed llama-server being fetched or started)."""

    text: str


@dataclass
class SessionReady:
    status: dict[str, Any] = field(default_factory=dict)


@dataclass
class SessionFailed:
    error: str


#: What the engine thread was asked to do (runner.Job): a turn, a `!cmd`, or a session action.
JobKind = Literal["run", "exec", "compact", "network", "discuss", "call"]


@dataclass
class JobDone:
    """A turn or a `!cmd` finished on the engine thread (the turn is over whatever its events
    said), or any job failed (`error`)."""

    kind: JobKind
    error: str = ""


Item = StreamText | EngineEvent | Provisioning | SessionReady | SessionFailed | JobDone
