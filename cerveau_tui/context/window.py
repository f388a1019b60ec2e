"""The window a session's model calls see: `[system, *frozen, *history[upto:]]`.

Why this shape: measured before it (reference/context.md), the packer re-built every request
around a resume brief whose text changed each round, so llama-server's prefix cache broke at the
brief: from round 4 on each request re-evaluated 1,030-1,200 tokens, 33k in all where 14k were new,
and the model saw a third of the window it had. The rules now:

- The stored history is append-only; the window never edits it. `frozen` stands for
  `history[:upto]` and stays byte-identical until the next compaction; between compactions only
  `history[upto:]` grows, at its end, so each request evaluates only what was appended.
- Compaction is rare and happens once: when a request would pass `high_water` of the budget, the
  window falls to `low_water` in one step. First PRUNE: old tool outputs (and long call arguments)
  outside the newest rounds become short placeholders naming the tool and its target; the pruned
  copies are appended to `frozen`, so the block the server cached before stays a prefix. Only if
  that is not enough, a SUMMARY block replaces `frozen`: the person's request verbatim and the
  summary (or the deterministic brief when the summary failed or is off), then the newest rounds
  verbatim in the tail.
- A call and its results move together (`rounds`): a result without its call is a shape no server
  accepts.

Pure: the summariser and the brief are callables handed in; no provider, no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .pack import message_tokens, rounds
from .prune import calls_by_id, prune_message

Message = dict[str, Any]
Summariser = Callable[[list[Message]], "str | None"]

#: Rounds whose results a prune keeps whole: the model's latest results are what it works from.
PRUNE_KEEP_ROUNDS = 2

SummarySource = Literal["model", "brief", "none"]


class WindowStateError(ValueError):
    """A stored window state that cannot be restored (say which field)."""


@dataclass
class WindowState:
    """What the window keeps across turns (EngineState.window); persisted at each compaction."""

    upto: int = 0  # history[:upto] is represented by `frozen`
    frozen: list[Message] = field(default_factory=list)
    compactions: int = 0
    # What the server counted beside the messages at the last reply (tools, template), if known.
    overhead: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the persistence helper stores this at each compaction."""
        return {
            "version": 1,
            "upto": self.upto,
            "frozen": copy.deepcopy(self.frozen),
            "compactions": self.compactions,
            "overhead": self.overhead,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WindowState:
        """The inverse of `to_dict`; a malformed record raises WindowStateError."""
        try:
            stored = _Stored.model_validate(dict(d))
        except ValidationError as exc:
            raise WindowStateError(f"stored window state is not valid: {exc}") from exc
        return cls(
            upto=stored.upto,
            frozen=[m.model_dump(exclude_none=True) for m in stored.frozen],
            compactions=stored.compactions,
            overhead=stored.overhead,
        )


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


@dataclass(frozen=True)
class Compaction:
    """One compaction, as the `compacted` event reports it."""

    tokens_before: int
    tokens_after: int
    dropped_rounds: int
    summary_source: SummarySource
    pruned: int
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
            self.state.upto, self.state.frozen = 0, []

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
        high = self.high_water * budget
        ours = self.tokens(system, history)
        if measured is None and not full and ours <= high:
            return None
        # The server's template adds tokens ours do not see: on its refusal, its count rules.
        scale = max(1.0, measured / max(ours, 1)) if measured else 1.0
        target = self.low_water * budget / scale
        spans = self._tail_spans(history)
        pruned_frozen, pruned, cut = self._prune(history, spans, target, system)
        after = self._cost(system, pruned_frozen, history[cut:])
        if pruned and after <= target and not full:
            self._freeze(pruned_frozen, cut)
            return Compaction(int(ours * scale), int(after * scale), 0, "none", pruned, reason)
        return self._summarise(
            system, history, spans, pruned_frozen, cut, request, target, ours, scale, reason,
            pruned, keep_rounds, summary_room,
        )  # fmt: skip

    def _tail_spans(self, history: Sequence[Message]) -> list[tuple[int, int]]:
        up = self.state.upto
        return [(a + up, b + up) for a, b in rounds(list(history[up:]))]

    def _cost(self, system: str, frozen: Sequence[Message], tail: Sequence[Message]) -> int:
        msgs = [self._system(system), *frozen, *tail]
        return sum(message_tokens(m, self.count) for m in msgs)

    def _prune(
        self,
        history: Sequence[Message],
        spans: list[tuple[int, int]],
        target: float,
        system: str,
    ) -> tuple[list[Message], int, int]:
        """(frozen extended by pruned copies of the older tail rounds, how many were pruned, the
        new `upto`). Only the newest round stays in the verbatim tail; the results of the newest
        PRUNE_KEEP_ROUNDS stay whole too (their calls' long arguments go: the model wrote those,
        and they are on disk), unless that does not reach `target`. Each message left verbatim
        after a pruned one is evaluated again by the server, so the tail kept is one round."""
        up = self.state.upto
        best: tuple[list[Message], int, int] = (list(self.state.frozen), 0, up)
        cut = _cut_keeping(spans, history, 1)
        if cut <= up:
            return best
        calls = calls_by_id(history[:cut])
        for whole_from in (_cut_keeping(spans, history, PRUNE_KEEP_ROUNDS), cut):
            copies, n = [], 0
            for i, m in enumerate(history[up:cut], start=up):
                p = prune_message(m, calls, results=i < whole_from)
                if p is not m and message_tokens(p, self.count) < message_tokens(m, self.count):
                    copies.append(p)
                    n += 1
                else:
                    copies.append(m)
            best = ([*self.state.frozen, *copies], n, cut)
            if self._cost(system, best[0], history[cut:]) <= target:
                break
        return best

    def _summarise(
        self,
        system: str,
        history: Sequence[Message],
        spans: list[tuple[int, int]],
        pruned_frozen: list[Message],
        pruned_cut: int,
        request: str,
        target: float,
        ours: int,
        scale: float,
        reason: str,
        pruned: int,
        keep_rounds: int | None,
        summary_room: int | None,
    ) -> Compaction | None:
        if not spans or (len(spans) < 2 and not self.state.frozen):
            return None  # one round and nothing before it: nothing a summary could stand for
        base = self._cost(system, [], []) + 200  # the system and room for the block itself
        if keep_rounds is not None:
            cut = _cut_keeping(spans, history, keep_rounds)
        else:
            cut, used, kept = len(history), base, 0
            for a, b in reversed(spans):
                c = sum(message_tokens(m, self.count) for m in history[a:b])
                if kept and used + c > target:
                    break
                used += c
                cut = a
                kept += history[a].get("role") == "assistant"
        if cut <= spans[0][0]:
            if len(spans) < 2 or len(self.state.frozen) <= 1 and not keep_rounds:
                # Everything left is the newest work: re-summarising the block alone would be a
                # summary call per round for nothing (the compaction that loops and burns quota).
                return None
            cut = spans[1][0]
        dropped = sum(1 for a, _ in spans if a < cut)
        gone = _stood_for(self.state, pruned_frozen, pruned_cut, history, cut)
        text = None
        if self.summarise is not None:
            text = self.summarise(self._within(gone, summary_room))
        source: SummarySource = "model" if text else "brief"
        block = summary_block(request, dropped, text, self.brief)
        self._freeze([block], cut)
        after = self._cost(system, [block], history[cut:])
        return Compaction(int(ours * scale), int(after * scale), dropped, source, pruned, reason)

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

    def _freeze(self, frozen: list[Message], upto: int) -> None:
        self.state.frozen = frozen
        self.state.upto = upto
        self.state.compactions += 1


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


def _stood_for(
    state: WindowState,
    pruned_frozen: list[Message],
    pruned_cut: int,
    history: Sequence[Message],
    cut: int,
) -> list[Message]:
    """What a summary block cut at `cut` stands for: the old block and the dropped rounds, in
    their pruned copies where the prune made them (what the model saw last; they fit a summary
    call). The copies are one per message of history[state.upto:pruned_cut]."""
    if cut >= pruned_cut:
        return [*pruned_frozen, *history[pruned_cut:cut]]
    return pruned_frozen[: len(state.frozen) + (cut - state.upto)]


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
