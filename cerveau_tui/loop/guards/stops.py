"""Guard stops that teach instead of tempt: what the model reads of a turn a guard stopped.

Why (issue 24): a fresh user's session with SmolLM2 ended 10 of 14 turns on the repeat guard, and
each turn copied the last one's failure: `bash ""` in three turns, `list_files test_file.txt` in
three, after `--continue` too. The stopped rounds stayed in the history, verbatim, N times over:
the best example of a tool call the model had. Words after them ("do not repeat it") did not
outweigh three copies of the call.

The rules (pure; `fold` is applied at the turn's end by loop/stop_notes.py):
- A stop names the calls it stands for: the repeat guard's identical calls (the refused one too),
  the breaker's failing commands of the shape it tripped on (every one of the turn, before and
  after the trip: each is the same dead end), the truncation guard's notes (the cut call itself
  never enters the history); when the progress guard stopped the turn, the calls that failed
  identically as often as the repeat guard allows (invalid arguments, which never ran, are not
  the repeat guard's to count).
- A turn that recovered keeps its stops verbatim: after the last stopped call the model made a
  call that worked. A failure followed by its fix is a lesson, not a temptation.
- Otherwise the stopped rounds leave what the model reads, from the first of them to the turn's
  end; the rounds between them that no stop names stay, in order; ONE marked harness note after
  them says which call was stopped, how often, why, and what to do instead. The session log
  keeps everything (the history is never edited: the window is, as a compaction does).
- A round with a call no stop names stays whole: a result without its call is a shape no server
  accepts, and the other call's result is information.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...context.pack import rounds
from ...history import HARNESS_MARK, Message
from ...hooks import CallRecord
from ...protocol import CallStatus
from .breaker import Breaker
from .repeats import canonical

#: How much of a call's arguments the note quotes: enough to recognise it, never a file's body.
LABEL_CHARS = 100
#: How many of a stop's distinct calls the note names.
NAMED_CALLS = 3
BY = {
    "repeat": "the repeat guard",
    "breaker": "the circuit breaker",
    "stall": "the progress guard",
}


@dataclass(frozen=True)
class GuardStop:
    """One guard's stop in one turn, as the note says it and as the fold finds its messages."""

    guard: str  # "repeat", "breaker", "truncation"
    calls: tuple[str, ...]  # the stopped calls as the note names them (distinct, in order)
    times: int  # how many calls (or cuts) the stop stands for
    why: str  # one line: the result they kept getting, the shape, the cap
    call_ids: frozenset[str] = frozenset()
    tells: frozenset[str] = frozenset()  # the guard's own harness notes (exact texts)


@dataclass(frozen=True)
class Fold:
    """What the model reads of history[start:] after the fold: `kept`, then the note."""

    start: int
    kept: list[dict[str, Any]] = field(default_factory=list)
    left_out: int = 0  # messages of history[start:] the model no longer reads
    rounds: int = 0  # stopped rounds left out
    note: str = ""


def call_label(name: str, arguments: dict[str, Any]) -> str:
    args = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    if len(args) > LABEL_CHARS:
        args = args[: LABEL_CHARS - 1] + "…"
    return f"{name} {args}"


def _first_line(text: str, n: int = 120) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= n else line[: n - 1] + "…"


def repeat_stop(
    records: Sequence[CallRecord], refused: Iterable[tuple[str, str, dict[str, Any]]], n: int
) -> GuardStop:
    """The repeat guard refused `refused` (call id, name, arguments): it and the identical calls
    that ran before it, the newest run of them in the turn."""
    refused = list(refused)
    _, name, args = refused[0]
    ids = {cid for cid, _, _ in refused}
    last_output = ""
    for rec in reversed(records):
        if rec.name != name or rec.arguments != args:
            break
        ids.add(rec.call_id)
        last_output = last_output or rec.output
    said = _first_line(last_output)
    why = f"the same result each time ({said})" if said else "the same result each time"
    return GuardStop("repeat", (call_label(name, args),), n, why, frozenset(ids))


def breaker_stops(
    records: Sequence[CallRecord], tripped: Iterable[str], taken: frozenset[str] = frozenset()
) -> list[GuardStop]:
    """One stop per shape the breaker tripped on (its event's reason): the turn's failed commands
    of that shape, less the calls another stop names (`taken`)."""
    out = []
    for shape in dict.fromkeys(tripped):
        hits = [
            r
            for r in records
            if r.command is not None and r.call_id not in taken and _shape_key(r) == shape
        ]
        if not hits:
            continue
        names = tuple(dict.fromkeys(call_label(r.name, r.arguments) for r in hits))
        out.append(
            GuardStop(
                "breaker",
                names[:NAMED_CALLS],
                len(hits),
                f"they all failed the same way ({shape})",
                frozenset(r.call_id for r in hits),
            )
        )
    return out


def _shape_key(rec: CallRecord) -> str | None:
    if rec.status == CallStatus.DENIED:
        return None  # the breaker does not count a refusal (turn_hooks.BreakerHook)
    trip = Breaker(1).observe(rec.command or "", rec.exit_code, rec.output)
    return trip.shape if trip is not None else None


def failing_repeats(records: Sequence[CallRecord], n: int) -> list[GuardStop]:
    """When the stall guard stopped the turn: the calls that failed identically `n` times or
    more (invalid arguments never reach the repeat guard, which counts calls that ran)."""
    groups: dict[str, list[CallRecord]] = {}
    for r in records:
        if r.status == CallStatus.FAILED:
            groups.setdefault(canonical(r.name, r.arguments), []).append(r)
    out = []
    for hits in groups.values():
        if len(hits) >= max(2, n):
            said = _first_line(hits[-1].output)
            out.append(
                GuardStop(
                    "stall",
                    (call_label(hits[0].name, hits[0].arguments),),
                    len(hits),
                    f"it failed each time ({said})" if said else "it failed each time",
                    frozenset(r.call_id for r in hits),
                )
            )
    return out


def truncation_stop(reasons: Sequence[str], tells: Iterable[str]) -> GuardStop | None:
    """The truncation guard's notes of this turn (the cut calls never entered the history)."""
    if not reasons:
        return None
    texts = frozenset(f"{HARNESS_MARK} {t}" for t in tells)
    return GuardStop("truncation", (), len(reasons), reasons[-1], tells=texts)


def note(stops: Sequence[GuardStop]) -> str:
    """The one harness note that stands for the stopped rounds."""
    lines = [
        "Your last turn was stopped by a guard. The stopped calls are left out of this "
        "conversation (the session log keeps them):"
    ]
    for s in stops:
        if s.guard == "truncation":
            lines.append(f"- a tool call cut off at the token cap {_times(s.times)}: {s.why}.")
            continue
        what = "; ".join(f"`{c}`" for c in s.calls)
        by = BY.get(s.guard, s.guard)
        lines.append(f"- {what}, {_times(s.times)}: {s.why}; {by} stopped it.")
    lines.append(
        "Do not send these calls again as they were: they will fail the same way. Take another "
        "approach, or answer the person in words and say what blocks you."
    )
    return "\n".join(lines)


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def fold(messages: Sequence[Message], turn_start: int, stops: Sequence[GuardStop]) -> Fold | None:
    """What the model reads of the turn that began at `turn_start` (its request is the message
    before it), or None when nothing is left out (no stop, or the turn recovered)."""
    if not stops:
        return None
    ids = frozenset().union(*(s.call_ids for s in stops))
    tells = frozenset().union(*(s.tells for s in stops))
    wire = [m.wire for m in messages]
    spans = [(a + turn_start, b + turn_start) for a, b in rounds(wire[turn_start:])]

    def stopped(a: int, b: int) -> bool:
        m = messages[a]
        if m.calls:
            return all(c.id in ids for c in m.calls)
        return m.role == "user" and m.content in tells

    marks = [stopped(a, b) for a, b in spans]
    if not any(marks):
        return None
    first = marks.index(True)
    last = len(marks) - 1 - marks[::-1].index(True)
    for (a, b), is_stop in zip(spans[last + 1 :], marks[last + 1 :], strict=True):
        if not is_stop and any(m.status == CallStatus.DONE for m in messages[a:b]):
            return None  # a call worked after the last stop: the turn recovered
    kept: list[dict[str, Any]] = []
    left = n_rounds = 0
    for (a, b), is_stop in zip(spans[first:], marks[first:], strict=True):
        if is_stop:
            left += b - a
            n_rounds += 1
        else:
            kept.extend(wire[a:b])
    return Fold(spans[first][0], kept, left, n_rounds, note(stops))
