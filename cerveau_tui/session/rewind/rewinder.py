"""Rewind: back to any earlier turn, the code, the conversation or both; and forward again.

The Rewinder listens to the bus and takes a restore point (rewind/points.py) just before each
turn starts and before each of the person's `!cmd`, and an "end" point after each turn, command
and rewind. A rewind puts the workspace back to a point's manifest (workspace/restore/checkpoints.py)
and/or cuts the history back to that turn's start: the next request is then a prefix of one the
server already evaluated (no re-evaluation). The plan ledger, the compacted window and the grants
follow the conversation. A file changed outside the harness since the point (the person's editor)
is never overwritten silently: OutsideChanges names it, unless forced (or kept); and the rewind
is itself a point, so `forward` undoes it. The log records it (a `rewind` record), so a resume
continues from the rewound conversation (session/stored.py).

Here: the points taken from the bus, what can be rewound to, the previews and the API; what a
rewind then does to the files, the log and the live session is rewind/perform.py.

/tmp-free contract with the TUI: see the README's Rewind paragraph; the names below are kept.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import protocol as P
from ...plan.persist import SessionLog
from ...protocol import Event
from ...protocol.records import PointAt
from ...workspace.fingerprint.fingerprinter import Fingerprinter
from ...workspace.restore.checkpoints import Capture, Manifest, differs
from ...workspace.restore.store import BlobStore
from .cut import Conversation
from .perform import perform
from .points import TARGETS, Point, Points, read_points
from .types import (
    MODES,
    RewindError,
    RewindMode,
    RewindPreview,
    RewindResult,
    TurnEntry,
    TurnRunning,
)

if TYPE_CHECKING:
    from ...bus import Emitter
    from ...loop.engine import Engine
    from ...plan.state import PlanState
    from ..journal import Journal


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Rewinder:
    """One session's restore points and rewinds. Live (engine given: the history, plan, window
    and grants follow) or offline (`cerveau rewind`: the log records it, a resume applies it)."""

    def __init__(
        self,
        store: BlobStore,
        fingerprinter: Fingerprinter,
        log: SessionLog,
        *,
        points: Points | None = None,
        engine: Engine | None = None,
        journal: Journal | None = None,
        plan: PlanState | None = None,
        bus: Emitter | None = None,
        history_len: int = 0,
        before: Conversation | None = None,
    ) -> None:
        self.store = store
        self.workspace = store.workspace
        self.log = log
        self.points = points if points is not None else Points(store)
        self.capture = Capture(store, fingerprinter)
        if self.points.points:
            try:
                self.capture.seed(self.points.last_manifest())
            except LookupError:
                pass
        self.engine = engine
        self.journal = journal
        self.plan = plan
        self.bus = bus
        self._history_len = history_len  # offline: the stored history's length
        self._lock = threading.RLock()
        self._running = False
        self._pending: Point | None = None  # a turn's point whose files are read at its first call
        #: The conversation just before the last rewind: what a forward gives back (a resumed
        #: session's, as its log folded it). Set by perform.py, the one writer.
        self.before = before
        self.warning = ""  # the last point that could not be taken, said once
        self._said: P.Rewound | None = None
        if bus is not None:
            bus.subscribe(self)

    @classmethod
    def for_session(
        cls, workspace: Path, session_id: str, *, log: SessionLog, history_len: int = 0
    ) -> Rewinder:
        """Offline (`cerveau rewind`): the session's points read back from its log."""
        store = BlobStore(workspace)
        pts = read_points(workspace, session_id, store)
        return cls(store, Fingerprinter(workspace), log, points=pts, history_len=history_len)

    # -- taking points (the bus) ------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        t = event.type
        try:
            if t == P.TurnStarted.event_type:
                self._running = True
                # What the turn starts from is said now; the files are read at its first call
                # (nothing of the turn can change them before): the first request of a session
                # on a big tree does not wait for the tree's first fingerprint.
                with self._lock:
                    self._settle()
                    self._pending = self._point("turn", event, str(event.payload.get("input", "")))
            elif t == P.ToolCallPayload.event_type:
                self._settle()
            elif t == P.UserExec.event_type:
                self._running = True
                self.take("command", event, "!" + str(event.payload.get("command", "")))
            elif t == P.TurnEnded.event_type:
                self._running = False
                self.take("end", event)
            elif t == P.ToolResultPayload.event_type and str(
                event.payload.get("call_id", "")
            ).startswith("user-"):
                self._running = False
                self.take("end", event)
        except Exception as exc:  # noqa: BLE001 - a point not taken must never end a turn
            self.warning = f"restore point not taken: {type(exc).__name__}: {exc}"

    def take(self, at: PointAt, event: Event | None = None, task: str = "") -> Point:
        with self._lock:
            self._settle()
            return self._finish(self._point(at, event, task))

    def _settle(self) -> None:
        """The turn's point, if its files are still to be read (see TURN_STARTED)."""
        with self._lock:
            p, self._pending = self._pending, None
            if p is not None:
                self._finish(p)

    def _point(self, at: PointAt, event: Event | None, task: str) -> Point:
        """A point's conversation, plan and grants, as they are now."""
        with self._lock:
            p = Point(
                id=uuid.uuid4().hex[:12],
                at=at,
                turn_id=event.turn_id if event is not None else "",
                task=(task.strip().splitlines() or [""])[0][:200],
                time=_now(),
                seq=event.seq if event is not None else 0,
                history=self._hlen(),
            )
            if at in ("turn", "command", "rewind"):
                p.window = self._window()
                p.writes = dict(self.plan.writes) if self.plan is not None else {}
                p.grants = self._grants()
            return p

    def _finish(self, p: Point) -> Point:
        """The files as they are now, then the point is recorded."""
        with self._lock:
            cap = self.capture
            p = self.points.next_delta(p, cap.take(), (cap.moved_from, cap.moved))
            self._write([p.dump()])
            self.points.add(p)
            return p

    def warm(self) -> None:
        """Bring the store in step before the first turn (the session's start, in the background):
        the first point of a big workspace copies every file once, and the turn should not wait
        for it. Takes no point; the next one finds the blobs there."""
        with self._lock:
            self.capture.take()

    # -- what the TUI calls -----------------------------------------------------------------------

    def turns(self) -> list[TurnEntry]:
        return self._entries(commands=False)

    def entries(self) -> list[TurnEntry]:
        """What the TUI lists: the turns and the points before the person's `!cmd`s (as
        `cerveau rewind --list --all` does), oldest first; a command's `turn` is the turns
        before it, its `label` "T.k"."""
        return self._entries(commands=True)

    def _entries(self, *, commands: bool) -> list[TurnEntry]:
        with self._lock:
            return [
                TurnEntry(
                    r.turn,
                    r.point.id,
                    r.point.turn_id,
                    r.point.task,
                    r.point.time,
                    len(r.files),
                    r.added,
                    r.removed,
                    r.current,
                    r.point.at,
                    r.label,
                )
                for r in self.points.rows(commands=commands)
            ]

    def preview(self, turn: int, mode: RewindMode = "both") -> RewindPreview:
        with self._lock:
            return self._preview(self._target(turn, mode), mode, turn)

    def preview_point(self, point_id: str, mode: RewindMode = "both") -> RewindPreview:
        """As `preview`, of a point of `checkpoints()` (before a `!cmd`, say)."""
        with self._lock:
            return self._preview(self._point_target(point_id, mode), mode, 0)

    def _preview(self, i: int, mode: RewindMode, turn: int) -> RewindPreview:
        with self._lock:
            now = self.capture.take()
            changes, outside = self._plan(i, mode, now)
            dropped = max(0, self._hlen() - self.points.points[i].history)
            return RewindPreview(turn, mode, changes, outside, dropped if mode != "code" else 0)

    def rewind(
        self,
        turn: int,
        mode: RewindMode = "both",
        *,
        force: bool = False,
        keep: Iterable[str] = (),
    ) -> RewindResult:
        with self._lock:
            i = self._target(turn, mode)
            result = self._go(i, mode, turn, force, set(keep), forward=False)
        self._announce()
        return result

    def rewind_last_turn(self, mode: RewindMode = "code", *, force: bool = False) -> RewindResult:
        n = self.points.turn_count()
        if n == 0:
            raise RewindError("no turn to rewind")
        return self.rewind(n, mode, force=force)

    def can_forward(self) -> bool:
        with self._lock:
            return self.points.can_forward()

    def forward(self, *, force: bool = False, keep: Iterable[str] = ()) -> RewindResult:
        with self._lock:
            if self._running:
                raise TurnRunning("a turn is running: forward between turns")
            if not self.points.can_forward():
                raise RewindError("nothing to go forward to: no rewind was the last thing done")
            _, last = self.points.rewinds[-1]
            i = self.points.last_rewind_point()
            result = self._go(i, last.mode, 0, force, set(keep), forward=True)
        self._announce()
        return result

    def transcript(self) -> list[Event]:
        from ..stored import read_session

        return read_session(self.workspace, self.log.session_id).transcript()

    # -- the targets, and what a rewind to one would change ---------------------------------------

    def _target(self, turn: int, mode: str) -> int:
        if mode not in MODES:
            raise RewindError(f"mode is one of {', '.join(MODES)}, not {mode!r}")
        if self._running:
            raise TurnRunning("a turn is running: rewind between turns")
        try:
            i = self.points.turn_index(turn)
        except LookupError as exc:
            raise RewindError(str(exc)) from None
        return self._reachable(i, mode, f"turn {turn}")

    def _reachable(self, i: int, mode: str, what: str) -> int:
        if mode != "code" and not self.points.reachable(i):
            raise RewindError(
                f"{what} was rewound away: its conversation is gone, only its code"
                " can be restored (--code-only)"
            )
        return i

    def checkpoints(self) -> list[Point]:
        """Every point a rewind can go to, oldest first: turns, the person's `!cmd`s, rewinds."""
        with self._lock:
            return [p for p in self.points.points if p.at in TARGETS]

    def rewind_to_point(
        self,
        point_id: str,
        mode: RewindMode = "both",
        *,
        force: bool = False,
        keep: Iterable[str] = (),
    ) -> RewindResult:
        """As `rewind`, to any point of `checkpoints()` (before a `!cmd`, say)."""
        with self._lock:
            i = self._point_target(point_id, mode)
            result = self._go(i, mode, self._turn_of(i), force, set(keep), forward=False)
        self._announce()
        return result

    def _point_target(self, point_id: str, mode: str) -> int:
        if mode not in MODES:
            raise RewindError(f"mode is one of {', '.join(MODES)}, not {mode!r}")
        if self._running:
            raise TurnRunning("a turn is running: rewind between turns")
        try:
            i = self.points.index(point_id)
        except LookupError as exc:
            raise RewindError(str(exc)) from None
        if self.points.points[i].at not in TARGETS:
            raise RewindError(f"point {point_id} is not one a rewind goes to")
        return self._reachable(i, mode, f"point {point_id}")

    def _turn_of(self, i: int) -> int:
        pts = self.points.points
        return sum(1 for p in pts[: i + 1] if p.at == "turn") if pts[i].at == "turn" else 0

    def _plan(self, i: int, mode: str, now: Manifest) -> tuple[list[str], list[str]]:
        if mode == "conversation":
            return [], []
        try:
            target = self.points.manifest(i)
        except LookupError as exc:
            raise RewindError(f"that point has expired: {exc}") from None
        changes = differs(target, now)
        outside = self.points.outside(i, now)
        return changes, sorted(set(outside) & set(changes))

    def _go(
        self, i: int, mode: RewindMode, turn: int, force: bool, keep: set[str], *, forward: bool
    ) -> RewindResult:
        """Rewind (or forward) to point `i` (rewind/perform.py); said by _announce, unlocked."""
        result, self._said = perform(self, i, mode, turn, force, keep, forward=forward)
        return result

    def _announce(self) -> None:
        said, self._said = self._said, None
        if said is None or self.bus is None:
            return
        self.bus.emit(said)
        if self.plan is not None:
            self.plan.publish(self.bus)

    # -- parts ------------------------------------------------------------------------------------

    def _write(self, records: list[dict[str, Any]]) -> None:
        if self.journal is not None:
            self.journal.flush(then=records)  # the history heard so far first, one write
        else:
            self.log.append(records, durable=True)

    def _hlen(self) -> int:
        return len(self.engine.history) if self.engine is not None else self._history_len

    def _window(self) -> dict[str, Any] | None:
        if self.engine is None:
            return None
        w = self.engine.loop_state.window
        return w.to_dict() if w.frozen else None

    def _grants(self) -> list[str]:
        if self.engine is None:
            return []
        policy = self.engine.policy
        return [k for k, _ in policy.session_scopes()] if policy is not None else []
