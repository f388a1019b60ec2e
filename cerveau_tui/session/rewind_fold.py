"""A stored session's `rewind` records folded: what `cerveau run --resume` continues from.

session/stored.py's Reader calls `fold` for each `rewind` record (written by session/rewind.py,
live or by `cerveau rewind`). A rewind of the conversation cuts what the log rebuilt so far back
to the point it names: the history to that length, the compacted window as it was then, the plan
events after the point and the turns cut away, the writes as they were, the session grants to
those then in force, the undo records of the cut turns. A forward record puts the last cut back
(the grants aside: asked again). A code-only rewind changes nothing here: only the files moved.
"""

from __future__ import annotations

from typing import Any

from ..history import History

#: session/stored.py's StoredSession (not imported: stored.py imports this module).
StoredSession = Any


def fold(s: StoredSession, r: dict[str, Any], full: bool) -> None:
    mode = r.get("mode")
    if mode not in ("both", "code", "conversation"):
        raise ValueError("unknown rewind mode")
    undo_cut = {str(t) for t in r.get("undo_cut") or []}
    s.undo = [u for u in s.undo if str(u.get("turn_id", "")) not in undo_cut]
    if mode == "code":
        return
    if r.get("forward"):
        if s.rewound:
            tail, window, events, writes, turns = s.rewound.pop()
            if full:
                s.history.restore([*s.history.messages, *tail])
            s.window = window
            s.plan_events.extend(events)
            s.writes.update(writes)
            s.turns.extend(turns)
        return
    n = int(r.get("history", 0))
    seq = int(r.get("plan_seq", 0))
    cut = {str(t) for t in r.get("cut_turns") or []}
    window = r.get("window")
    writes = r.get("writes") or {}
    if not isinstance(writes, dict) or not (window is None or isinstance(window, dict)):
        raise ValueError("a rewind record's window or writes is malformed")
    messages = list(s.history.messages)
    gone_events = [e for e in s.plan_events if e.seq > seq]
    gone_turns = [t for t in s.turns if t.turn_id in cut]
    s.rewound.append((messages[n:], s.window, gone_events, dict(s.writes), gone_turns))
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
    # The redraw: the cut turns' events leave with them (the deque holds the last turns).
    for _ in range(min(len(gone_turns), len(s._recent))):
        s._recent.pop()
