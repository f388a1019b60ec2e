"""A rewind in a live session: the engine's history, window, plan ledger and grants follow.

The cut is cut.py's, the one a resume applies to the stored session (fold.py); here it is read
from and applied to the running objects: the history (History.restore tells no listener: the
`rewind` record in the log says it), the compacted window, the plan ledger, and the session
grants given since the point (revoked through the journal: the log records each revoke).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...context.window import WindowState
from ...history import Message
from .cut import Conversation
from .points import Point

if TYPE_CHECKING:
    from ...loop.engine import Engine
    from ...plan.state import PlanState


def now(engine: Engine, plan: PlanState | None) -> Conversation:
    """The live session's conversation as it is."""
    policy = engine.policy
    return Conversation(
        tuple(engine.history.messages),
        engine.loop_state.window.to_dict(),
        tuple(plan.events) if plan is not None else (),
        dict(plan.writes) if plan is not None else {},
        frozenset(k for k, _ in policy.session_scopes()) if policy is not None else frozenset(),
    )


def apply(engine: Engine, plan: PlanState | None, c: Conversation) -> None:
    """The live session put in conversation `c` (a cut, or what a forward gives back)."""
    engine.history.restore(list(c.messages))
    window = c.window
    engine.loop_state.window = WindowState.from_dict(window) if window else WindowState()
    if plan is not None:
        plan.rewind_to(-1, {})  # the ledger emptied, then given exactly `c`'s events and writes
        plan.restore(c.plan_events, c.writes)
    policy = engine.policy
    if policy is not None:
        for key, _ in policy.session_scopes():
            if key not in c.grants:
                policy.revoke(key)


def tell_model(engine: Engine, target: Point, mode: str) -> None:
    """What the model must know: only when the code and the conversation disagree now (a
    code-only or conversation-only rewind). A rewind of both leaves nothing to say: the history
    and the files are as they were together, and the next request stays a cached prefix. (A
    forward says nothing either: both are back as they were together.)"""
    if mode == "both":
        return
    if mode == "code":
        text = (
            "The person rewound the workspace's files to how they were before an earlier turn"
            f" ({target.task[:80]!r}); the conversation was kept. Read the files again before"
            " relying on what you remember of them."
        )
    else:
        text = (
            "The person rewound the conversation; the workspace's files were NOT changed back:"
            " they may hold changes this conversation does not mention. Check them first."
        )
    engine.history.append(Message.harness(text))
