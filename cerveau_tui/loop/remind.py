"""The hooks' voices outside a round: the one reminder message before a model call, and the work
that runs after a turn ended.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import protocol as P
from ..bus import Emitter
from ..history import History, Message, Origin
from ..hooks import Hook, TurnContext

#: How the one reminder message starts: the model (and a person reading the log) can tell the
#: harness's mid-session news from what the person typed.
REMINDER_HEADER = "[reminder from the harness: things changed since you last read]"


def remind(hooks: Sequence[Hook], ctx: TurnContext, history: History, bus: Emitter) -> str | None:
    """Whatever the hooks say changed, as ONE marked message appended after the history: the
    prefix the server has cached is never touched. Returns the text appended, if any."""
    said: list[tuple[str, str]] = []
    for h in hooks:
        try:
            said += [(h.name, text) for text in h.reminders(ctx) if text.strip()]
        except Exception as exc:  # a reminder source must not end the turn
            _internal(bus, h, exc)
    if not said:
        return None
    text = "\n\n".join([REMINDER_HEADER, *(t.strip() for _, t in said)])
    history.append(Message.user(text, Origin.REMINDER))
    sources = sorted({name for name, _ in said})
    bus.emit(P.ReminderPayload(text=text, sources=sources))
    return text


def after_turn(hooks: Sequence[Hook], ctx: TurnContext, reason: str, bus: Emitter) -> None:
    for h in hooks:
        try:
            h.after_turn(ctx, reason)
        except Exception as exc:  # one hook's failure must not keep the others from running
            _internal(bus, h, exc)


def _internal(bus: Emitter, h: Hook, exc: Exception) -> None:
    bus.emit(P.ErrorPayload(message=f"{h.name}: {exc}", error_class="internal"))
