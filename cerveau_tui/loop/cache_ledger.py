"""The cache ledger: per request, the tokens the server evaluated and the tokens it reused, in its
own figures, and a miss said when a request re-read much more than it appended.

Measured (reference/context.md): nobody saw the cache. A 100-round session evaluated 32,869
tokens for 19,867 appended; a compaction re-read 2,400-3,500 tokens; a resume re-read all 3,599.
Peers' users found their broken caches only with mitmproxy (a moving reminder, a changed system
prompt, a template that drops reasoning). So every request's figures go on the bus, and a request
that evaluates far more than it appended is a `cache_miss` notice naming the cause when the
harness knows it.

The rules (pure, `tests/foundation/test_cache_ledger.py`):
- The figures are the server's: `timings.prompt_n` (evaluated) and `timings.cache_n` (reused);
  without timings, `usage.prompt_tokens` less `usage.prompt_tokens_details.cached_tokens`.
  Without either, nothing is known and nothing is said.
- Appended is what the prompt grew by since the previous request's context (its prompt and its
  reply, as the server counted them). The first request of a process has no previous one: it
  appended all of it, never a miss (a resume's restore is judged by the slot keeper).
- A miss: evaluated above MISS_FLOOR and above MISS_RATIO times what was appended plus the floor.
- The cause, in this order: a compaction before this request; a prompt that grew by messages yet
  was read as no longer than the last one (the server cut it: loop/silent_cut.py says how much);
  the first message that differs from
  the previous request's (the system prompt: the instructions; a reminder; else the history);
  when every earlier message is the same, the harness cannot see it: the chat template re-rendered
  an earlier turn, or the server lost its cache (restarted, or another client used the slot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..provider.types import Completion
from .remind import REMINDER_HEADER

#: Re-reading up to this many tokens is noise (a template's framing, the reply re-tokenised).
MISS_FLOOR = 256
#: How many times what was appended a request may evaluate before it is a miss.
MISS_RATIO = 2.0

CAUSE_COMPACTION = "compaction"
CAUSE_CUT = (
    "the server cut the prompt: messages were appended, yet it read no more tokens than last time "
    "(its window is smaller than the harness's)"
)
CAUSE_INSTRUCTIONS = "a changed system prompt (an instruction file)"
CAUSE_REMINDER = "a reminder"
CAUSE_HISTORY = "an earlier message changed"
CAUSE_UNSEEN = (
    "unknown to the harness: the messages kept their prefix, so the chat template re-rendered an "
    "earlier turn, or the server lost its cache (restarted, or another client used the slot)"
)


@dataclass(frozen=True)
class Figures:
    """One request as the server counted it."""

    evaluated: int
    cached: int
    predicted: int = 0

    @property
    def prompt(self) -> int:
        return self.evaluated + self.cached

    @property
    def context(self) -> int:
        return self.prompt + self.predicted


def figures_of(c: Completion) -> Figures | None:
    """The server's own figures for a completion; None when it gave none."""
    t = c.timings
    if t is not None and (t.prompt_n or t.cache_n):
        return Figures(t.prompt_n, t.cache_n, t.predicted_n)
    u = c.usage
    if u.prompt_tokens:
        cached = min(u.cached_tokens, u.prompt_tokens)
        return Figures(u.prompt_tokens - cached, cached, u.completion_tokens)
    return None


@dataclass(frozen=True)
class Miss:
    evaluated: int
    appended: int
    cached: int
    cause: str

    def text(self) -> str:
        return (
            f"cache miss: the server re-read {self.evaluated:,} prompt tokens for "
            f"{self.appended:,} appended ({self.cached:,} reused); cause: {self.cause}"
        )


def is_miss(evaluated: int, appended: int) -> bool:
    return evaluated > MISS_FLOOR and evaluated > MISS_RATIO * appended + MISS_FLOOR


def miss_cause(
    before: Sequence[dict[str, Any]], now: Sequence[dict[str, Any]], *, compacted: bool
) -> str:
    if compacted:
        return CAUSE_COMPACTION
    for i, (old, new) in enumerate(zip(before, now, strict=False)):
        if old == new:
            continue
        if i == 0 and old.get("role") == "system":
            return CAUSE_INSTRUCTIONS
        if any(_is_reminder(m) for m in (old, new)):
            return CAUSE_REMINDER
        return CAUSE_HISTORY
    return CAUSE_UNSEEN


def _is_reminder(m: dict[str, Any]) -> bool:
    content = m.get("content")
    return isinstance(content, str) and content.startswith(REMINDER_HEADER)


@dataclass
class CacheLedger:
    """What lives across requests (and turns) of one session: the previous request."""

    last: Figures | None = None
    last_messages: list[dict[str, Any]] = field(default_factory=list)
    compacted: bool = False  # a compaction since the last request (context/window.py)
    window: int | None = None  # what the server really keeps, once it cut a prompt (silent_cut.py)

    def record(self, messages: Sequence[dict[str, Any]], figures: Figures) -> Miss | None:
        prev, before, compacted = self.last, self.last_messages, self.compacted
        self.last, self.last_messages, self.compacted = figures, list(messages), False
        if prev is None:
            return None
        appended = max(0, figures.prompt - prev.context)
        if not is_miss(figures.evaluated, appended):
            return None
        grew = len(messages) > len(before) and figures.prompt <= prev.prompt
        cause = (
            CAUSE_CUT
            if grew and not compacted
            else miss_cause(before, messages, compacted=compacted)
        )
        return Miss(figures.evaluated, appended, figures.cached, cause)


@dataclass
class TurnCache:
    """The sums over one turn that `turn_ended` carries (`prompt_evaluated`, `prompt_cached`)."""

    evaluated: int = 0
    cached: int = 0

    def add(self, f: Figures | None) -> None:
        if f is not None:
            self.evaluated += f.evaluated
            self.cached += f.cached

    def fields(self) -> dict[str, int]:
        return {"prompt_evaluated": self.evaluated, "prompt_cached": self.cached}
