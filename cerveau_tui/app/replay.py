"""Redrawing a resumed session: its stored events turned back into what the chat shows.

The log keeps whole replies (`assistant_message`), not the streamed fragments, and it keeps the
approvals that were asked: replayed as they are, the first would draw no text and the second would
open a dialog for a question answered yesterday. So each stored event becomes the items the live
path would have produced, and what only made sense live is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..protocol import (
    ApprovalRequested,
    AssistantMessage,
    Event,
    IterationStarted,
    ReasoningPayload,
    ReplyProgress,
    SessionStarted,
    StackProgress,
    TokenPayload,
)
from .messages import EngineEvent, Item, StreamText

#: Live-only: a question already answered, progress of a reply long finished, start-up lines.
NOT_REDRAWN = frozenset(
    {
        ApprovalRequested.event_type,
        ReplyProgress.event_type,
        StackProgress.event_type,
        SessionStarted.event_type,
        TokenPayload.event_type,
        ReasoningPayload.event_type,
        IterationStarted.event_type,
    }
)


def redraw_items(events: Iterable[Event], show_reasoning: bool = True) -> list[Item]:
    items: list[Item] = []
    for ev in events:
        if ev.type in NOT_REDRAWN:
            continue
        if ev.type == AssistantMessage.event_type:
            p: dict[str, Any] = ev.payload
            if show_reasoning and p.get("reasoning"):
                items.append(StreamText("reasoning", str(p["reasoning"])))
            if p.get("content"):
                items.append(StreamText("answer", str(p["content"])))
        items.append(EngineEvent(ev))
    return items


def transcript_of(session: Any) -> list[Event]:
    """The resumed session's stored events, or none (a fresh session, or one that cannot say)."""
    transcript = getattr(session, "transcript", None)
    if transcript is None:
        return []
    try:
        return list(transcript())
    except Exception:  # noqa: BLE001 - a redraw that fails must not keep the session from starting
        return []
