"""A rewind in a live session: the engine's history, window, plan ledger and grants follow.

The same cut session/rewind_fold.py applies to a stored session on resume, applied here to the
running objects: the history back to the point's length (History.restore tells no listener: the
`rewind` record in the log says it), the compacted window as it was then, the plan events after
the point gone and the writes as they were, the session grants given since taken back (through
the journal: the log records each revoke). Grants taken back are not given again by forward:
the person's grant is asked again instead, the safe side.
"""

from __future__ import annotations

from typing import Any

from ..context.window import WindowState
from ..history import Message
from .rewind_points import Point

#: The session/rewind.py Rewinder (not imported: it imports this module).
Rewinder = Any


def apply_conversation(rw: Rewinder, target: Point, forward: bool, cut: list[str]) -> None:
    eng = rw.engine
    state = eng.loop_state
    history = eng.history
    if forward:
        if not rw._tails:
            return
        tail, window, events, writes = rw._tails.pop()
        history.restore([*history.messages, *tail])
        if isinstance(window, dict):
            window = WindowState.from_dict(window)
        state.window = window if isinstance(window, WindowState) else WindowState()
        if rw.plan is not None and events is not None:
            rw.plan.restore(events, writes)
        return
    messages = list(history.messages)
    window_before = state.window
    history.restore(messages[: target.history])
    state.window = (
        WindowState.from_dict(target.window) if target.window is not None else WindowState()
    )
    gone: list[Any] = []
    writes_before: dict[str, int] = {}
    if rw.plan is not None and hasattr(rw.plan, "rewind_to"):
        writes_before = dict(rw.plan.writes)
        gone = rw.plan.rewind_to(target.seq, target.writes)
    rw._tails.append((messages[target.history :], window_before, gone, writes_before))
    for turn_id in cut:
        state.turn_changes.pop(turn_id, None)
    state.task = ""
    policy = eng.policy
    scopes = getattr(policy, "session_scopes", None)
    if scopes is not None:
        for key, _ in list(scopes()):
            if key not in target.grants:
                policy.revoke(key)


def tell_model(rw: Rewinder, target: Point, mode: str, forward: bool) -> None:
    """What the model must know: only when the code and the conversation disagree now (a
    code-only or conversation-only rewind). A rewind of both leaves nothing to say: the history
    and the files are as they were together, and the next request stays a cached prefix."""
    if mode == "both":
        return
    what = "went forward again (the rewind before was undone)" if forward else "rewound"
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
