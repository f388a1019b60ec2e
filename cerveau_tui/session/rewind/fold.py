"""A stored session's `rewind` records folded: what `cerveau run --resume` continues from.

session/stored.py's Reader calls `fold` for each `rewind` record (built by session/rewind/perform.py,
live or by `cerveau rewind`). A rewind of the conversation cuts what the log rebuilt so far back
to the point it names: the history to that length, the compacted window as it was then, the plan
events after the point and the turns cut away, the writes as they were, the session grants to
those then in force, the undo records of the cut turns, and the redraw (the events a TUI shows
again) to before the point. A code-only rewind cuts nothing here: only the files moved (and a
note to the model follows it in the log).

A forward record puts back what the session was just before the rewind it undoes, whatever that
rewind's mode: the history as it was (the rewind's note to the model goes with the rewind), the
window, the plan events, the turns and the redraw (a resume after a forward redrew the cut chat
when only the history came back). Forward only ever follows its rewind directly (Points.
can_forward), so what was folded just before the rewind is exactly what it returns to; the
grants aside: asked again.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from ...history import History, Message

#: session/stored.py's StoredSession (not imported: stored.py imports this module).
StoredSession = Any


@dataclass
class Before:
    """What the fold held just before one rewind record: what its forward gives back."""

    messages: list[Message]
    window: dict[str, Any] | None
    plan_events: list[Any]
    writes: dict[str, int]
    turns: list[Any]
    turn_changes: dict[str, list[str]]
    recent: list[list[dict[str, Any]]]


def fold(s: StoredSession, r: dict[str, Any], full: bool) -> None:
    mode = r.get("mode")
    if mode not in ("both", "code", "conversation"):
        raise ValueError("unknown rewind mode")
    if r.get("forward"):
        if s.rewound:
            _give_back(s, s.rewound.pop(), full)
        return
    undo_cut = {str(t) for t in r.get("undo_cut") or []}
    s.undo = [u for u in s.undo if str(u.get("turn_id", "")) not in undo_cut]
    n = int(r.get("history", 0))
    seq = int(r.get("plan_seq", 0))
    cut = {str(t) for t in r.get("cut_turns") or []}
    window = r.get("window")
    writes = r.get("writes") or {}
    if not isinstance(writes, dict) or not (window is None or isinstance(window, dict)):
        raise ValueError("a rewind record's window or writes is malformed")
    messages = list(s.history.messages)
    # Only the last one is ever given back (a forward follows its rewind directly, once).
    s.rewound[:] = [
        Before(
            messages,
            s.window,
            list(s.plan_events),
            dict(s.writes),
            list(s.turns),
            dict(s.turn_changes),
            [list(t) for t in s._recent],
        )
    ]
    if mode == "code":
        return
    gone_turns = [t for t in s.turns if t.turn_id in cut]
    if full:
        s.history = History(messages[:n])
    s.window = window
    s.plan_events = [e for e in s.plan_events if e.seq <= seq]
    s.writes = {str(k): int(v) for k, v in writes.items()}
    s.turns = [t for t in s.turns if t.turn_id not in cut]
    for t in cut:
        s.turn_changes.pop(t, None)
    keep = {str(g) for g in r.get("grants") or []}
    for key in [k for k in s.grants if k not in keep]:
        del s.grants[key]
    s.undo = [u for u in s.undo if str(u.get("turn_id", "")) not in cut]
    s.last_results.clear()
    # The redraw: the cut turns' events leave with them (the deque holds the last turns), and a
    # point inside a turn's redraw (before a `!cmd`) takes what came from it on.
    for _ in range(min(len(gone_turns), len(s._recent))):
        s._recent.pop()
    if seq > 0:
        for events in s._recent:
            events[:] = [e for e in events if not _from(e, seq)]


def _from(raw: dict[str, Any], seq: int) -> bool:
    at = raw.get("seq")
    return isinstance(at, int) and at >= seq


def _give_back(s: StoredSession, b: Before, full: bool) -> None:
    if full:
        s.history = History(b.messages)
    s.window = b.window
    s.plan_events = b.plan_events
    s.writes = b.writes
    s.turns = b.turns
    s.turn_changes = b.turn_changes
    s._recent = deque(b.recent, maxlen=s._recent.maxlen)
