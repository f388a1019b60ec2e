"""Performing a rewind or a forward: the files, the log, the points and the live session move.

The Rewinder (rewinder.py) lists the points, previews and checks a target, and holds the lock;
`perform` is what then happens, in this order: a point of the state now (what `forward` returns
to), the files put back (workspace/restore/checkpoints.py restore: the person's edits named by the
preview are kept or overwritten as asked), the `rewind` record in the log (what a resume folds,
rewind/fold.py), and, in a live session, the conversation, plan and grants cut (rewind/live.py).
Functions over the Rewinder, as rewind/live.py: it is the one caller, and it holds the lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ... import protocol as P
from ...protocol import Event
from ...protocol.records import PointAt, RewindRecord
from ...workspace.restore.checkpoints import Capture, CheckpointExpired, Manifest, restore
from ...workspace.restore.store import BlobStore
from .cut import Conversation, Cut, cut
from .points import Point, Points
from .types import OutsideChanges, RewindError, RewindMode, RewindResult

if TYPE_CHECKING:
    from ...loop.engine import Engine
    from ...plan.state import PlanState


class Rewinder(Protocol):
    """What of rewinder.py's Rewinder a rewind uses (not imported: it imports this module, and no
    import cycle is allowed, tests/test_import_contracts.py)."""

    store: BlobStore
    workspace: Path
    points: Points
    capture: Capture
    engine: Engine | None
    plan: PlanState | None
    before: Conversation | None
    _history_len: int

    def take(self, at: PointAt, event: Event | None = None, task: str = "") -> Point: ...
    def _plan(self, i: int, mode: str, now: Manifest) -> tuple[list[str], list[str]]: ...
    def _write(self, records: list[dict[str, Any]]) -> None: ...
    def _hlen(self) -> int: ...


def perform(
    rw: Rewinder, i: int, mode: RewindMode, turn: int, force: bool, keep: set[str], *, forward: bool
) -> tuple[RewindResult, P.Rewound]:
    """Rewind (or forward) to point `i`; the result, and the event to say once unlocked."""
    now = rw.capture.take()
    changes, outside = rw._plan(i, mode, now)
    named = [p for p in outside if p not in keep]
    if named and not force:
        raise OutsideChanges(named)
    target = rw.points.points[i]
    # The rewind is itself a point: the state now, with the conversation now, is what
    # forward() returns to (the person's own edits included: they are in the store now).
    to = "" if forward or target.at == "turn" else f"before {target.task[:80]}"
    what = "forward" if forward else f"rewind to {to or f'turn {turn}'}"
    before = rw.take("rewind", None, what)
    done = None
    if mode != "conversation":
        try:
            done = restore(rw.store, rw.points.manifest(i), now, keep & set(changes))
        except CheckpointExpired as exc:
            raise RewindError(f"that point has expired: {exc}") from None
    cut_out = cut_turns(rw, i) if mode != "code" and not forward else []
    back_to = Cut.to(target, cut_out)
    record = RewindRecord(to=target.id, mode=mode, forward=forward, turn=turn, **back_to.record())
    dropped = rw._hlen() - target.history if mode != "code" and not forward else 0
    rw._write([record.dump()])
    rw.points.rewound(record)
    if rw.engine is not None:
        _live(rw, rw.engine, target, back_to, mode, forward, done is not None)
    elif mode != "code":
        rw._history_len = target.history if not forward else rw._history_len
    rw.take("end")
    restored = sorted(done.written) if done else []
    removed = sorted(done.removed) if done else []
    refused = sorted(done.refused) if done else []
    result = RewindResult(
        turn,
        mode,
        restored,
        removed,
        refused,
        sorted(keep & set(changes)),
        named if force else [],
        rw._hlen(),
        before.id,
        done.guarded if done else "",
    )
    # Said once the lock is let go (Rewinder._announce): an emit takes the bus's lock, and the
    # bus calls the Rewinder under it (a point at turn_started): never the two in both orders.
    said = P.Rewound(
        turn=turn,
        to=to,
        mode=mode,
        forward=forward,
        restored=restored,
        removed=removed,
        refused=refused,
        outside=result.outside,
        kept=result.kept,
        history_len=result.history_len,
        messages_dropped=max(0, dropped),
    )
    return result, said


def cut_turns(rw: Rewinder, i: int) -> list[str]:
    """The turns from point `i` on: what a rewind there takes out of the conversation."""
    return [p.turn_id for p in rw.points.points[i:] if p.at == "turn" and p.turn_id]


def _live(
    rw: Rewinder, eng: Engine, target: Point, to: Cut, mode: str, forward: bool, code: bool
) -> None:
    from . import live

    if forward:
        if rw.before is not None:  # whatever the mode: the conversation before the rewind
            live.apply(eng, rw.plan, rw.before)
            rw.before = None
    else:
        rw.before = live.now(eng, rw.plan)  # what its forward gives back
        if mode != "code":
            live.apply(eng, rw.plan, cut(rw.before, to))
            eng.loop_state.task = ""
    if code:
        eng.loop_state.tools.record_write(rw.workspace)  # the verification seal is stale
    if not forward:
        live.tell_model(eng, target, mode)
