"""Turn close: after the answer has shipped, distil what the turn taught into notes.

The distill runs in `after_turn`, after turn_ended was emitted, in the engine's background thread:
a person waiting for an answer never waits for note-taking, and a next prompt stops it (dropped,
said in a quiet notice: Engine.run). It CONTINUES the conversation the server has cached: the
turn's last request as sent (same system message, same tools, same messages, the answer
appended) plus one instruction, so the server evaluates only that instruction and the reply.
Measured (issue 36): the old distill sent the system message, the last 12 messages and no tools,
so it shared with the cache only up to where the tools are rendered and re-read the rest: 3.54x
the evaluated tokens of a session without it. In constrained mode (the tools live in the system
message) the reply is held to a JSON schema, which is not part of the prompt; in native mode a
schema beside tools makes llama-server render its generic tool prompt (a new prefix), so the
instruction asks for JSON and a reply that is not JSON distils nothing. Where the conversation
holds a command the PERSON ran (`!cmd`), or has no room left for the reply, the distill reads
the model's own view instead (issue 24: the person's experiments are not the model's lessons).

The curator keeps only short, specific notes and drops what is already known. A parse failure,
a cut-off reply or a dead server degrades to an empty result: the turn must not fail because
note-taking did.

The notes come back at the NEXT session as a reminder (Hook.reminders, on its first model call)
with their age, so the model can weigh a note from last month against one from an hour ago; never
in the system prompt, whose cached prefix must not move when memory does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .. import protocol as P
from ..history import History, Origin
from ..hooks import Conversation, Hook, TurnContext
from ..provider.types import ErrorClass, ProviderError
from .store import MemoryStore, Note

TURN_CLOSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "lessons": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["facts", "lessons"],
}
DISTILL_PROMPT = (
    "The turn is over. List at most 3 facts about this workspace and at most 3 lessons about what "
    'worked or failed, each one short sentence, as JSON {"facts": [...], "lessons": [...]}.'
)
#: Native mode has no schema to hold the reply (see above): the instruction says it all.
DISTILL_ASK_NATIVE = DISTILL_PROMPT + " Call no tool; reply with the JSON only."
DISTILL_FORMAT = {"type": "json_schema", "json_schema": {"schema": TURN_CLOSE_SCHEMA}}
DISTILL_MAX_TOKENS = 1024
#: Below this many tokens of room after the conversation, the distill reads the model's view.
MIN_DISTILL_ROOM = 128
#: Tokens kept free beside the conversation and the reply: the instruction and its framing.
DISTILL_FRAME = 96
DROPPED = "turn close dropped: the next prompt came first (no notes from the last turn)"
#: How many notes one recall carries: the most confirmed, then the newest.
RECALL_LIMIT = 8
RECALL_HEADER = (
    "Notes from earlier sessions in this workspace (with their age; check before relying on one):"
)


@dataclass
class Distilled:
    facts: list[str] = field(default_factory=list)
    lessons: list[str] = field(default_factory=list)


def parse_distill(text: str) -> Distilled:
    try:
        data = json.loads(_json_of(text))
    except (json.JSONDecodeError, TypeError):
        return Distilled()
    if not isinstance(data, dict):
        return Distilled()

    def strings(v: Any) -> list[str]:
        return [s for s in v if isinstance(s, str)] if isinstance(v, list) else []

    return Distilled(strings(data.get("facts")), strings(data.get("lessons")))


def _json_of(text: str) -> str:
    """The object in a native-mode reply: it may come fenced, or after a sentence."""
    if not isinstance(text, str):
        return ""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


def curate(notes: list[str]) -> list[str]:
    """Keep notes a later turn can use: a sentence of 4 to 30 words with a concrete token in it
    (a path, a name, a number, a command); drop filler a small model produces."""
    kept = []
    for n in notes:
        words = n.split()
        if not 4 <= len(words) <= 30:
            continue
        if not re.search(r"[/._`0-9]|[a-z]+_[a-z]+|[A-Z][a-z]+[A-Z]", n):
            continue
        kept.append(n.strip())
    return kept


def age(seconds: float) -> str:
    """'3 h ago': coarse on purpose, a note's age is a weight, not a timestamp."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


#: What one recalled note may carry: curate keeps 4 to 30 words, so a longer one was not written
#: by this harness (a memory.sqlite planted in a cloned workspace) and is cut to one short line.
NOTE_CHARS = 300


def _bounded(text: object, limit: int) -> str:
    s = " ".join(str(text).split())  # one line: a note cannot open a forged paragraph
    return s if len(s) <= limit else s[: limit - 1] + "…"


def recall_text(notes: list[Note], now: float) -> str:
    lines = [
        f"- {age(now - n.updated)}: ({_bounded(n.kind, 20)}) {_bounded(n.text, NOTE_CHARS)}"
        for n in notes
    ]
    return "\n".join([RECALL_HEADER, *lines])


def _the_models_view(history: Any) -> list[dict[str, Any]]:
    """The history without the person's own `!cmd` runs: their experiments are not what the model
    learnt, and distilled they came back next session as the model's lessons (issue 24)."""
    if isinstance(history, History):
        return [m.wire for m in history.messages if m.origin != Origin.SHELL]
    return list(history)


def _holds_the_persons(conv: Conversation, history: Any) -> bool:
    """Whether the conversation holds a command the person ran (`!cmd`): its output is in the
    model's context, and continuing it would distil the person's experiment as a lesson."""
    if not isinstance(history, History):
        return False
    theirs = [m.wire for m in history.messages if m.origin == Origin.SHELL]
    return any(m in theirs for m in conv.messages) if theirs else False


def _constrained(provider: Any, conv: Conversation) -> bool:
    if not conv.tools:
        return True  # no tools rendered: a schema cannot change the prompt
    try:
        return provider.resolved_mode() == "constrained"
    except Exception:  # noqa: BLE001 - a flaky /props: no schema, the instruction asks for JSON
        return False


class TurnCloseHook(Hook):
    name = "turn_close"

    def __init__(self, provider: Any, store: MemoryStore) -> None:
        self.provider = provider
        self.store = store
        # What this session recalls: the notes that existed when it started, so a note distilled
        # an hour into the session is not "recalled" to the model that just wrote it.
        self._started = store.now()
        self._recalled = False
        # The person's switch (the palette, Session.set_turn_close): off, no distill; the notes
        # of earlier sessions are still recalled, they were paid for.
        self.enabled = True

    def distill(self, ctx: TurnContext) -> Distilled:
        conv = ctx.conversation
        room = ctx.n_ctx - ctx.context_tokens - DISTILL_FRAME if ctx.n_ctx else DISTILL_MAX_TOKENS
        if conv is None or room < MIN_DISTILL_ROOM or _holds_the_persons(conv, ctx.history):
            return self._distill_view(_the_models_view(ctx.history), ctx.system)
        constrained = _constrained(self.provider, conv)
        ask = DISTILL_PROMPT if constrained else DISTILL_ASK_NATIVE
        messages = [*conv.messages, {"role": "user", "content": ask}]
        try:
            done = self.provider.complete(
                messages,
                conv.tools,
                max_tokens=min(DISTILL_MAX_TOKENS, room),
                cancel=ctx.cancel,
                **({"extra": {"response_format": DISTILL_FORMAT}} if constrained else {}),
            )
        except ProviderError as exc:
            if exc.error_class == ErrorClass.CANCELLED:
                ctx.emit(P.NoticePayload(text=DROPPED, source="memory"))
            return Distilled()
        except Exception:  # noqa: BLE001 - note-taking never fails the session
            return Distilled()
        if done.tool_calls:
            return Distilled()
        return parse_distill(done.raw or done.content)

    def _distill_view(self, history: list[dict[str, Any]], system: str = "") -> Distilled:
        """The model's own view, without the cache: opened with the session's system message, as
        every request of the session is; the last 12 messages; no tools."""
        head = [{"role": "system", "content": system}] if system else []
        messages = [*head, *history[-12:], {"role": "user", "content": DISTILL_PROMPT}]
        try:
            reply = self.provider.complete_json(
                messages, TURN_CLOSE_SCHEMA, max_tokens=DISTILL_MAX_TOKENS
            )
        except Exception:  # noqa: BLE001 - note-taking never fails the session
            return Distilled()
        return parse_distill(reply)

    def after_turn(self, ctx: TurnContext, reason: str) -> None:
        if not self.enabled or reason != "completed" or not any(c.wrote for c in ctx.calls):
            return
        d = self.distill(ctx)
        added = [t for t in curate(d.facts) if self.store.add("fact", t)]
        added += [t for t in curate(d.lessons) if self.store.add("lesson", t)]
        self._say_set_aside(ctx)
        if added:
            ctx.emit(P.NoticePayload(text="remembered: " + "; ".join(added), source="memory"))

    def reminders(self, ctx: TurnContext) -> list[str]:
        # Once, at the session's first model call: notes are news to a new session only.
        if self._recalled:
            return []
        self._recalled = True
        notes = [n for n in self.store.notes(RECALL_LIMIT * 4) if n.created < self._started]
        self._say_set_aside(ctx)
        if not notes:
            return []
        return [recall_text(notes[:RECALL_LIMIT], self.store.now())]

    def _say_set_aside(self, ctx: TurnContext) -> None:
        # A query aborted past its bound (or corruption found) mid-session: the file was moved
        # aside for a fresh one, and the person is told once, as the session tells at start.
        for aside in self.store.take_set_aside():
            ctx.emit(P.NoticePayload(text=str(aside), level="warning", source="boundary"))

    def close(self) -> None:
        self.store.close()
