"""Turn close: after the answer has shipped, distil what the turn taught into notes.

The distill is a grammar-constrained call (a JSON schema) with a 256-token cap. A parse failure,
a cut-off reply or a dead server degrades to an empty result: the turn must not fail because
note-taking did. The curator keeps only short, specific notes and drops what is already known.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..hooks import Hook, TurnContext
from ..protocol import EventType
from .store import MemoryStore

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
DISTILL_MAX_TOKENS = 256


@dataclass
class Distilled:
    facts: list[str] = field(default_factory=list)
    lessons: list[str] = field(default_factory=list)


def parse_distill(text: str) -> Distilled:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return Distilled()
    if not isinstance(data, dict):
        return Distilled()

    def strings(v: Any) -> list[str]:
        return [s for s in v if isinstance(s, str)] if isinstance(v, list) else []

    return Distilled(strings(data.get("facts")), strings(data.get("lessons")))


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


class TurnCloseHook(Hook):
    name = "turn_close"

    def __init__(self, provider: Any, store: MemoryStore) -> None:
        self.provider = provider
        self.store = store

    def distill(self, history: list[dict[str, Any]]) -> Distilled:
        messages = [*history[-12:], {"role": "user", "content": DISTILL_PROMPT}]
        try:
            reply = self.provider.complete_json(
                messages, TURN_CLOSE_SCHEMA, max_tokens=DISTILL_MAX_TOKENS
            )
        except Exception:
            return Distilled()
        return parse_distill(reply)

    def on_turn_end(self, ctx: TurnContext, reason: str) -> dict[str, Any]:
        if reason != "completed" or not any(c.wrote for c in ctx.calls):
            return {}
        d = self.distill(ctx.history)
        added = [t for t in curate(d.facts) if self.store.add("fact", t)]
        added += [t for t in curate(d.lessons) if self.store.add("lesson", t)]
        if added:
            ctx.emit(
                EventType.NOTICE, {"text": "remembered: " + "; ".join(added), "source": "memory"}
            )
        return {}

    def on_turn_start(self, ctx: TurnContext, task: str) -> None:
        # Carried notes enter as a message at the first turn of a session, never into the system
        # prompt: the stable prefix must not change when memory does.
        if getattr(self, "_briefed", False):
            return None
        self._briefed = True
        notes = self.store.recent()
        if notes:
            lines = "\n".join(f"- ({k}) {t}" for k, t in notes)
            ctx.history.insert(
                len(ctx.history) - 1,
                {
                    "role": "user",
                    "content": f"[harness] Notes from earlier sessions in this workspace:\n{lines}",
                },
            )
        return None

    def close(self) -> None:
        self.store.close()
