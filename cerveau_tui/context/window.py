"""The window a session's model calls see: `[system, *frozen, *history[upto:]]`.

Why this shape: measured before it (reference/context.md), the packer re-built every request
around a resume brief whose text changed each round, so llama-server's prefix cache broke at the
brief: from round 4 on each request re-evaluated 1,030-1,200 tokens, 33k in all where 14k were new,
and the model saw a third of the window it had. The rules now:

- The stored history is append-only; the window never edits it. `frozen` stands for
  `history[:upto]` and stays byte-identical until the next compaction; between compactions only
  `history[upto:]` grows, at its end, so each request evaluates only what was appended.
- Compaction is rare and happens once: when a request would pass `high_water` of the budget, the
  oldest whole rounds right after the system message go as ONE contiguous block, as many as bring
  the window to `low_water`, and every message kept stays byte-identical (the same objects). What
  stands for the dropped block (the model's handoff, or the deterministic brief) is APPENDED after
  the kept messages, before any message the person or the harness added since the last request.
- Why appended, and why nothing kept is rewritten: llama-server's `--cache-reuse N` finds the kept
  messages in its cache after the common prefix and shifts them into place, but only a prompt that
  is the cached one with deletions: its search stops at the first token that is in no cached
  chunk, so a block inserted after the system message, or one pruned tool output among the kept
  ones, makes it re-read everything after it. Measured before (issue 36: old tool outputs pruned
  into placeholders at every compaction, the summary after the system message), a 100-round
  session on an 8,192 window evaluated 1.65x what it appended, each compaction re-reading
  2.4-3.5k tokens; benchmarks/context.py prints the figures after.
- The block of the previous compaction (and what came before it) always goes with the next drop:
  the new handoff stands for it, so the window holds one handoff, in order, never two.
- A call and its results move together (`rounds`): a result without its call is a shape no server
  accepts.

Pure: the summariser and the brief are callables handed in; no provider, no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .pack import message_tokens, rounds
from .prune import calls_by_id, prune_message

Message = dict[str, Any]

#: Rounds of the dropped block whose results the summary call reads whole: the model's latest
#: results are what it worked from; older ones go to it as placeholders (the call's input fits).
PRUNE_KEEP_ROUNDS = 2
#: Tokens a compaction reserves for what stands for the dropped block, when choosing the drop.
BLOCK_ROOM = 200

SummarySource = Literal["model", "brief", "none"]

#: The message after a handoff that continued the conversation: the next reply is the model's.
RESUME_NOTE = (
    "[harness] The earlier part of this conversation was removed to fit the context window; "
    "the handoff above stands for it. Files are on disk: read them again rather than trusting "
    "memory. Continue the task."
)


class WindowStateError(ValueError):
    """A stored window state that cannot be restored (say which field)."""


@dataclass(frozen=True)
class Handoff:
    """A summary written as the next message of the conversation the server has cached
    (loop/summarise.py's continuation): the question as it was sent and the model's answer. Both
    are kept in the window as they were, so the server finds them in its cache too."""

    asked: Message
    answer: str


Summariser = Callable[[list[Message]], "str | Handoff | None"]


@dataclass
class WindowState:
    """What the window keeps across turns (EngineState.window); persisted at each compaction."""

    upto: int = 0  # history[:upto] is represented by `frozen`
    frozen: list[Message] = field(default_factory=list)
    compactions: int = 0
    # What the server counted beside the messages at the last reply (tools, template), if known.
    overhead: int | None = None
    # frozen[block_start:block_end] is the last compaction's handoff or brief; the next drop
    # takes everything before block_end.
    block_start: int = 0
    block_end: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the persistence helper stores this at each compaction."""
        return {
            "version": 1,
            "upto": self.upto,
            "frozen": copy.deepcopy(self.frozen),
            "compactions": self.compactions,
            "overhead": self.overhead,
            "block_start": self.block_start,
            "block_end": self.block_end,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WindowState:
        """The inverse of `to_dict`; a malformed record raises WindowStateError. A record from
        before block_end was stored had its block (and pruned copies) as all of `frozen`."""
        try:
            stored = _Stored.model_validate(dict(d))
        except ValidationError as exc:
            raise WindowStateError(f"stored window state is not valid: {exc}") from exc
        end = len(stored.frozen) if stored.block_end is None else stored.block_end
        return cls(
            upto=stored.upto,
            frozen=[m.model_dump(exclude_none=True) for m in stored.frozen],
            compactions=stored.compactions,
            overhead=stored.overhead,
            block_start=stored.block_start,
            block_end=end,
        )

    def reset(self) -> None:
        self.upto, self.frozen, self.block_start, self.block_end = 0, [], 0, 0


class _StoredFunction(BaseModel):
    name: str
    arguments: str = ""


class _StoredCall(BaseModel):
    """A stored call of the shape every reader expects: a planted log with `function` as a
    string ended every resumed turn with an internal error in the token count."""

    model_config = ConfigDict(extra="allow")
    id: str = ""
    type: str = "function"
    function: _StoredFunction


class _StoredMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[_StoredCall] | None = None
    tool_call_id: str | None = None


class _Stored(BaseModel):
    model_config = ConfigDict(extra="ignore")
    version: Literal[1] = 1
    upto: int = Field(0, ge=0)
    frozen: list[_StoredMessage] = Field(default_factory=list)
    compactions: int = Field(0, ge=0)
    overhead: int | None = Field(None, ge=0)
    block_start: int = Field(0, ge=0)
    block_end: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _block_inside_frozen(self) -> _Stored:
        end = len(self.frozen) if self.block_end is None else self.block_end
        if not self.block_start <= end <= len(self.frozen):
            raise ValueError("block_start/block_end do not lie within frozen")
        return self


@dataclass(frozen=True)
class Compaction:
    """One compaction, as the `compacted` event reports it."""

    tokens_before: int
    tokens_after: int
    dropped_rounds: int
    summary_source: SummarySource
    pruned: int  # kept for the event's shape: a compaction rewrites nothing it keeps, so 0
    reason: str


class Window:
    """The request built from the history and the state; `fit` compacts it when it must."""

    def __init__(
        self,
        state: WindowState,
        *,
        count: Callable[[str], int],
        high_water: float,
        low_water: float,
        summarise: Summariser | None = None,
        brief: Callable[[int], str] | None = None,
    ) -> None:
        self.state = state
        self.count = count
        self.high_water = high_water
        self.low_water = low_water
        self.summarise = summarise
        self.brief = brief or (lambda n: f"[harness] {n} earlier rounds were compacted.")
        self._sys: Message | None = None
        # (frozen, system message, upto, history length, tokens) at the last count: see tokens().
        self._total: tuple[list[Message], Message, int, int, int] | None = None

    # --- the request -----------------------------------------------------------------------------

    def messages(self, system: str, history: Sequence[Message]) -> list[Message]:
        self._check(history)
        return [self._system(system), *self.state.frozen, *history[self.state.upto :]]

    def tokens(self, system: str, history: Sequence[Message]) -> int:
        """What the request costs. Between compactions only the history's end is new, so only
        that is added: summing every message each call was the window's largest cost per round
        (the objects, not ids, are compared: a freed list's id can come back)."""
        self._check(history)
        s, sys_msg = self.state, self._system(system)
        last = self._total
        if last is not None and last[0] is s.frozen and last[1] is sys_msg:
            _, _, upto, seen, total = last
            if upto == s.upto and seen <= len(history):
                total += sum(message_tokens(m, self.count) for m in history[seen:])
                self._total = (s.frozen, sys_msg, upto, len(history), total)
                return total
        total = sum(message_tokens(m, self.count) for m in self.messages(system, history))
        self._total = (s.frozen, sys_msg, s.upto, len(history), total)
        return total

    def _system(self, system: str) -> Message:
        # One object per prompt text: token counts are memoised per message object.
        if self._sys is None or self._sys["content"] != system:
            self._sys = {"role": "system", "content": system}
        return self._sys

    def _check(self, history: Sequence[Message]) -> None:
        """A state that does not match this history (restored against another one) is dropped
        rather than trusted: a request cut at a tool result is refused by every server."""
        s = self.state
        if s.upto > len(history) or (
            s.upto < len(history) and history[s.upto].get("role") == "tool"
        ):
            s.reset()

    # --- compaction ------------------------------------------------------------------------------

    def fit(
        self,
        system: str,
        history: Sequence[Message],
        *,
        budget: int,
        request: str,
        reason: str = "high_water",
        measured: int | None = None,
        full: bool = False,
        keep_rounds: int | None = None,
        summary_room: int | None = None,
    ) -> Compaction | None:
        """Compact once when the request passes `high_water` of `budget` (always when `measured`,
        the server's count of a prompt it refused, or `full`, the person's compact, is given).
        Returns what was done, or None when nothing was needed or nothing could be cut."""
        self._check(history)
        ours = self.tokens(system, history)
        if measured is None and not full and ours <= self.high_water * budget:
            return None
        # The server's template adds tokens ours do not see: on its refusal, its count rules.
        scale = max(1.0, measured / max(ours, 1)) if measured else 1.0
        target = self.low_water * budget / scale
        current = [*self.state.frozen, *history[self.state.upto :]]
        spans = rounds(current)
        cut = self._drop_until(system, current, spans, target, keep_rounds)
        if not cut:
            # Only the newest work or the last block would go: re-summarising it would be a
            # summary call per round for nothing (the compaction that loops and burns quota).
            return None
        gone = current[:cut]
        dropped = sum(
            1
            for a, _ in spans
            if a < cut and not self.state.block_start <= a < self.state.block_end
        )
        kept = current[cut:]
        # What the person or the harness added since the last request stays the newest message.
        new = _trailing_user(history, self.state.upto, len(kept))
        block, source = self._block(gone, dropped, request, summary_room)
        frozen = [*kept[: len(kept) - new], *block]
        self._freeze(frozen, len(history) - new, len(frozen) - len(block))
        after = self._cost(system, frozen, history[len(history) - new :])
        return Compaction(int(ours * scale), int(after * scale), dropped, source, 0, reason)

    def _drop_until(
        self,
        system: str,
        current: list[Message],
        spans: list[tuple[int, int]],
        target: float,
        keep_rounds: int | None,
    ) -> int:
        """Where the kept part starts (0: nothing can go). A round's start, past the last block
        (the new one stands for it), with at least one round the model began in the part that
        goes (a server's refusal can come below our own count of the target); the newest
        `keep_rounds` rounds (one by default) stay when they came after the block, and what came
        after the block stays when they did not. The first such point whose kept part and block
        fit `target`, or the latest when a count of rounds is asked or none fits."""
        s = self.state
        newest = _cut_keeping(spans, current, keep_rounds or 1)
        after_block = [a for a, _ in spans if a >= s.block_end] + [len(current)]
        limit = newest if newest >= s.block_end else after_block[0]
        began = [
            a + 1 for a, _ in spans if _began(current[a]) and not s.block_start <= a < s.block_end
        ]
        allowed = [p for p in after_block if p <= limit and began and began[0] <= p]
        if not allowed:
            return 0
        if keep_rounds is not None:
            return allowed[-1]
        base = self._cost(system, [], []) + BLOCK_ROOM
        suffix = [0] * (len(current) + 1)
        for i in range(len(current) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + message_tokens(current[i], self.count)
        return next((p for p in allowed if base + suffix[p] <= target), allowed[-1])

    def _block(
        self, gone: list[Message], dropped: int, request: str, room: int | None
    ) -> tuple[list[Message], SummarySource]:
        """What stands for the dropped block: the handoff as the model continued the
        conversation, or as one block message, or the brief when the summary failed or is off."""
        said = self.summarise(self._within(_slim(gone), room)) if self.summarise else None
        if isinstance(said, Handoff):
            answer = {"role": "assistant", "content": said.answer}
            return [said.asked, answer, {"role": "user", "content": RESUME_NOTE}], "model"
        source: SummarySource = "model" if said else "brief"
        return [summary_block(request, dropped, said, self.brief)], source

    def _cost(self, system: str, frozen: Sequence[Message], tail: Sequence[Message]) -> int:
        msgs = [self._system(system), *frozen, *tail]
        return sum(message_tokens(m, self.count) for m in msgs)

    def _within(self, msgs: list[Message], room: int | None) -> list[Message]:
        """The summary call's input cut to `room` tokens: the first message (the oldest context,
        usually the request or the previous block) and the newest that fit."""
        if room is None or not msgs:
            return msgs
        costs = [message_tokens(m, self.count) for m in msgs]
        if sum(costs) <= room:
            return msgs
        used, tail = costs[0], []
        for m, c in zip(reversed(msgs[1:]), reversed(costs[1:]), strict=True):
            if used + c > room:
                break
            tail.append(m)
            used += c
        return [msgs[0], *reversed(tail)]

    def _freeze(self, frozen: list[Message], upto: int, block_start: int) -> None:
        self.state.frozen = frozen
        self.state.upto = upto
        self.state.block_start, self.state.block_end = block_start, len(frozen)
        self.state.compactions += 1


def _slim(gone: list[Message]) -> list[Message]:
    """The dropped block as the summary call reads it: copies with old results as placeholders
    and long call arguments cleared (the written files are on disk), the newest
    PRUNE_KEEP_ROUNDS rounds' results whole. The window itself is never pruned."""
    spans = rounds(gone)
    whole_from = _cut_keeping(spans, gone, PRUNE_KEEP_ROUNDS)
    calls = calls_by_id(gone)
    return [prune_message(m, calls, results=i < whole_from) for i, m in enumerate(gone)]


def _began(msg: Message) -> bool:
    return msg.get("role") == "assistant"


def _trailing_user(history: Sequence[Message], upto: int, kept: int) -> int:
    """How many messages at the history's end are the person's or the harness's (a new request,
    a reminder) and not yet frozen: the block goes before them, so the model's next reply still
    answers them rather than the block."""
    n = 0
    while n < min(kept, len(history) - upto) and history[-1 - n].get("role") == "user":
        n += 1
    return n


def _cut_keeping(spans: list[tuple[int, int]], history: Sequence[Message], keep: int) -> int:
    """Where the tail starts when the newest `keep` rounds stay verbatim. A round is a span the
    model began (its reply, its calls and their results); the harness's messages after it (a
    reminder, a steer) stay with it, so a reminder never counts as the round it follows."""
    cut, seen = spans[-1][0] if spans else len(history), 0
    for a, _ in reversed(spans):
        if seen >= keep:
            break
        cut = a
        seen += history[a].get("role") == "assistant"
    return cut


def summary_block(
    request: str, dropped: int, summary: str | None, brief: Callable[[int], str]
) -> Message:
    """The one message that stands for the compacted rounds. The request goes in verbatim either
    way: a model that lost the goal cannot re-derive it from a file listing."""
    head = (
        f"[harness] Earlier work in this session ({dropped} rounds) was compacted to fit the "
        "context window. Files are on disk: read them again rather than trusting memory."
    )
    if summary:
        body = (
            f"The person's request, verbatim:\n{request.strip() and request or '(none)'}\n\n"
            f"Handoff written from the compacted rounds:\n{summary.strip()}"
        )
    else:
        body = brief(dropped)
    return {"role": "user", "content": f"{head}\n\n{body}"}
