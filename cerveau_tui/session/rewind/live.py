"""A rewind in a live session: the engine's history, window, plan ledger and grants follow.

The same cut session/rewind/fold.py applies to a stored session on resume, applied here to the
running objects: the history back to the point's length (History.restore tells no listener: the
`rewind` record in the log says it), the compacted window as it was then, the plan events after
the point gone and the writes as they were, the session grants given since taken back (through
the journal: the log records each revoke). Grants taken back are not given again by forward:
the person's grant is asked again instead, the safe side.

Every rewind, whatever its mode, keeps what the conversation was just before it (`_tails`); a
forward puts exactly that back: the history as it was (the rewind's own note to the model
leaves with it: after a forward the code and the conversation agree again), the window and the
plan ledger. rewind/fold.py does the same to the stored session.
"""

from __future__ import annotations

from typing import Any

from ...context.window import WindowState
from ...history import Message
from .points import Point

#: The Rewinder (rewinder.py; not imported: it imports this module).
Rewinder = Any


def keep_before(rw: Rewinder) -> None:
    """What the conversation is just before a rewind (any mode): what its forward gives back."""
    eng = rw.engine
    plan = rw.plan
    writes = dict(plan.writes) if plan is not None else {}
    # Only the last one is ever given back: a forward follows its rewind directly, once.
    rw._tails[:] = [(list(eng.history.messages), eng.loop_state.window, None, writes)]


def forward_conversation(rw: Rewinder) -> None:
    """The conversation as it was just before the rewind a forward undoes."""
    if not rw._tails:
        return
    eng = rw.engine
    messages, window, events, writes = rw._tails.pop()
    eng.history.restore(messages)
    if isinstance(window, dict):
        window = WindowState.from_dict(window)
    eng.loop_state.window = window if isinstance(window, WindowState) else WindowState()
    if rw.plan is not None and events is not None:
        rw.plan.restore(events, writes)


def apply_conversation(rw: Rewinder, target: Point, cut: list[str]) -> None:
    """The conversation cut back to `target` (keep_before has kept what it was)."""
    eng = rw.engine
    state = eng.loop_state
    history = eng.history
    history.restore(list(history.messages)[: target.history])
    state.window = (
        WindowState.from_dict(target.window) if target.window is not None else WindowState()
    )
    if rw.plan is not None and hasattr(rw.plan, "rewind_to"):
        gone = rw.plan.rewind_to(target.seq, target.writes)
        messages, window, _, writes = rw._tails[-1]
        rw._tails[-1] = (messages, window, gone, writes)
    for turn_id in cut:
        state.turn_changes.pop(turn_id, None)
    state.task = ""
    if eng.policy is not None:
        for key, _ in eng.policy.session_scopes():
            if key not in target.grants:
                eng.policy.revoke(key)


def tell_model(rw: Rewinder, target: Point, mode: str) -> None:
    """What the model must know: only when the code and the conversation disagree now (a
    code-only or conversation-only rewind). A rewind of both leaves nothing to say: the history
    and the files are as they were together, and the next request stays a cached prefix. (A
    forward says nothing either: both are back as they were together.)"""
    if mode == "both":
        return
    what = "rewound"
    if mode == "code":
        text = (
            f"The person {what} the workspace's files to how they were before an earlier turn"
            f" ({target.task[:80]!r}); the conversation was kept. Read the files again before"
            " relying on what you remember of them."
        )
    else:
        text = (
            f"The person {what} the conversation; the workspace's files were NOT changed back:"
            " they may hold changes this conversation does not mention. Check them first."
        )
    rw.engine.history.append(Message.harness(text))
