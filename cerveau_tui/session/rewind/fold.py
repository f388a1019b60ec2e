"""A stored session's `rewind` records folded: what `cerveau run --resume` continues from.

session/stored.py's Reader calls `fold` for each `rewind` record (written by perform.py, live or
by `cerveau rewind`). A rewind of the conversation cuts what the log rebuilt so far back to its
point (cut.py, the same cut a live rewind makes), and with it what only a stored session holds:
the turns cut away and the redraw (the events a TUI shows again) to before the point. A code-only
rewind cuts nothing here: only the files moved (and a note to the model follows it in the log).

A forward record puts back what the session was just before the rewind it undoes, whatever that
rewind's mode, the redraw included (a resume after a forward redrew the cut chat when only the
history came back). Forward only ever follows its rewind directly (Points.can_forward), so what
was folded just before the rewind is exactly what it returns to.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from ...history import History
from ...protocol.records import RewindRecord
from .cut import Conversation, Cut, cut

#: session/stored.py's StoredSession (not imported: stored.py imports this module).
StoredSession = Any


@dataclass(frozen=True)
class Before:
    """What the fold held just before one rewind record: what its forward gives back."""

    conversation: Conversation
    turns: list[Any]  # stored.py's TurnStatus
    recent: list[list[dict[str, Any]]]


def fold(s: StoredSession, r: RewindRecord, full: bool) -> None:
    if r.forward:
        if s.rewound:
            _give_back(s, s.rewound.pop(), full)
        return
    to = Cut.of(r)
    now = Conversation(
        tuple(s.history.messages),
        s.window,
        tuple(s.plan_events),
        dict(s.writes),
        frozenset(s.grants),
    )
    # Only the last one is ever given back (a forward follows its rewind directly, once).
    s.rewound[:] = [Before(now, list(s.turns), [list(t) for t in s._recent])]
    if r.mode == "code":
        return
    _apply(s, cut(now, to), full)
    gone_turns = [t for t in s.turns if t.turn_id in to.turns]
    s.turns = [t for t in s.turns if t.turn_id not in to.turns]
    s.last_results.clear()
    # The redraw: the cut turns' events leave with them (the deque holds the last turns), and a
    # point inside a turn's redraw (before a `!cmd`) takes what came from it on.
    for _ in range(min(len(gone_turns), len(s._recent))):
        s._recent.pop()
    if to.plan_seq > 0:
        for events in s._recent:
            events[:] = [e for e in events if not _from(e, to.plan_seq)]


def _apply(s: StoredSession, c: Conversation, full: bool) -> None:
    if full:
        s.history = History(c.messages)
    s.window = c.window
    s.plan_events = list(c.plan_events)
    s.writes = dict(c.writes)
    for key in [k for k in s.grants if k not in c.grants]:
        del s.grants[key]


def _from(raw: dict[str, Any], seq: int) -> bool:
    at = raw.get("seq")
    return isinstance(at, int) and at >= seq


def _give_back(s: StoredSession, b: Before, full: bool) -> None:
    _apply(s, b.conversation, full)
    s.turns = b.turns
    s._recent = deque(b.recent, maxlen=s._recent.maxlen)
