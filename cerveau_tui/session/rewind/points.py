"""The restore points of one session as its log holds them, and what a rewind reads of them.

A point is one `restore_point` record (sealed like every line of the log):

    id        unique in the session
    at        "turn" (just before a turn started), "command" (before the person's `!cmd`),
              "rewind" (just before a rewind: what "forward" goes back to), "end" (after a turn,
              a command or a rewind: the state the harness left, against which the next
              point tells the person's own changes)
    turn_id, task, time, seq (the bus sequence then: the plan ledger's position)
    history   len(History) then; window: the compacted window's state then (or null)
    writes    the plan ledger's writes then (rel -> seq); grants: the session grants in force
    full      a manifest blob (workspace/restore/checkpoints.py) or `changes`: the delta from the point
              before it in the same log

A `rewind` record says a rewind happened (`to` a point, its mode, and what the conversation
was cut back to): session/stored.py folds it, so `cerveau run --resume` continues from there.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...person_key import load_key
from ...plan.persist import iter_lines, open_log, sealed_by
from ...protocol.records import PointRecord, RewindRecord
from ...workspace.restore.checkpoints import (
    NOT_CAPTURED,
    Entry,
    Manifest,
    apply_delta,
    delta,
    differs,
    manifest_from,
)
from ...workspace.restore.store import BlobMissing, BlobStore

POINT = "restore_point"
REWIND = "rewind"
TARGETS = ("turn", "command", "rewind")  # the points a rewind can go to (not "end")
FULL_EVERY = 64  # a full manifest every so many points: a chain of deltas stays short
DIFF_MAX = 1 << 20  # +/- lines are counted for text files up to this size


#: A point is its record: what the log holds is what a rewind reads (`dump()` writes it).
Point = PointRecord


@dataclass(frozen=True)
class TurnRow:
    turn: int  # a command's: the turns before it
    point: Point
    files: list[str]
    added: int
    removed: int
    current: bool
    label: str = ""  # "3" for turn 3, "3.1" for the first `!cmd` after it


class Points:
    """One session's points in order, with their manifests rebuilt from the store on demand."""

    def __init__(self, store: BlobStore) -> None:
        self.store = store
        self.points: list[Point] = []
        self.rewinds: list[tuple[int, RewindRecord]] = []  # (points before it, the record)
        self.current: list[int] = []  # the turn numbers the conversation holds now
        self._stack: list[list[int]] = []  # `current` before each conversation rewind
        self._cuts: list[tuple[int, int]] = []  # (points before it, its target) of each in force
        self._cache: dict[int, Manifest] = {}

    # -- building -------------------------------------------------------------------------------

    def add(self, p: Point) -> None:
        self.points.append(p)
        if p.at == "turn":
            self.current.append(self.turn_count())

    def rewound(self, r: RewindRecord) -> None:
        pos = len(self.points)
        self.rewinds.append((pos, r))
        if r.mode == "code":
            return
        if r.forward:
            if self._stack:
                self.current = self._stack.pop()
                self._cuts.pop()
            return
        try:
            idx = self.index(r.to)
        except LookupError:
            idx = pos
        n, gone = 0, set()
        for j, p in enumerate(self.points):
            if p.at == "turn":
                n += 1
                if j >= idx:
                    gone.add(n)
        self._stack.append(list(self.current))
        self._cuts.append((pos, idx))
        self.current = [t for t in self.current if t not in gone]

    def reachable(self, i: int) -> bool:
        """Whether point i's conversation is still the one the history holds the start of: no
        conversation rewind in force went back to before it after it was taken."""
        return not any(idx < i < pos for pos, idx in self._cuts)

    def line(self, obj: Mapping[str, Any]) -> None:
        """One line of the log: a point or a rewind read as its record (ValidationError when
        malformed); every other line is not rewind's."""
        kind = obj.get("kind")
        if kind == POINT:
            self.add(PointRecord.model_validate(obj))
        elif kind == REWIND:
            self.rewound(RewindRecord.model_validate(obj))

    def next_delta(
        self,
        p: Point,
        manifest: Manifest,
        since: tuple[Manifest | None, set[str] | None] = (None, None),
    ) -> Point:
        """`p` with its manifest as a delta from the last point (a full one now and then).
        `since`: the manifest the capture started from and the paths it found could differ
        (Capture.moved_from, .moved); when that is the last point's, the delta reads only them."""
        if not self.points or len(self.points) % FULL_EVERY == 0:
            from ...workspace.restore.checkpoints import manifest_bytes

            p.full = self.store.put(manifest_bytes(manifest))
        else:
            base = self.manifest(len(self.points) - 1)
            only = since[1] if since[0] is base else None
            p.changes = delta(base, manifest, only)
        # The newest point's manifest is the next delta's base (and the capture's own `known`:
        # no copy); the one before it is the turn a rewind most often goes back to. Older ones
        # are rebuilt from the store when asked: a manifest per point was kept for the whole
        # session (a copy of a 100,000-file tree per turn start and per turn end).
        n = len(self.points)
        for k in [k for k in self._cache if k < n - 1]:
            del self._cache[k]
        self._cache[n] = manifest
        return p

    # -- reading --------------------------------------------------------------------------------

    def turn_count(self) -> int:
        return sum(1 for p in self.points if p.at == "turn")

    def manifest(self, i: int) -> Manifest:
        if i in self._cache:
            return self._cache[i]
        j = i
        while j > 0 and not self.points[j].full and j not in self._cache:
            j -= 1
        if j in self._cache:
            m = self._cache[j]
        elif self.points[j].full:
            try:
                m = manifest_from(self.store.get(self.points[j].full))
            except (BlobMissing, ValueError) as exc:
                raise LookupError(f"restore point {self.points[j].id}: {exc}") from None
        else:
            m = apply_delta({}, self.points[j].changes)
        for k in range(j + 1, i + 1):
            m = apply_delta(m, self.points[k].changes)
        if len(self._cache) > 8:
            self._cache.clear()
        self._cache[i] = m
        return m

    def index(self, point_id: str) -> int:
        for i, p in enumerate(self.points):
            if p.id == point_id:
                return i
        raise LookupError(f"no restore point {point_id!r}")

    def turn_index(self, turn: int) -> int:
        n = 0
        for i, p in enumerate(self.points):
            if p.at == "turn":
                n += 1
                if n == turn:
                    return i
        raise LookupError(f"no turn {turn}: this session has {n} turn(s)")

    def last_manifest(self) -> Manifest:
        return self.manifest(len(self.points) - 1) if self.points else {}

    def outside(self, since: int, now: Mapping[str, Entry]) -> list[str]:
        """Paths changed outside the harness since point `since`: between a point the harness
        left ("end") and the next one it took, and since the last such point until `now`."""
        found: set[str] = set()
        pts = self.points
        for i in range(since, len(pts)):
            if pts[i].at != "end":
                continue
            after = self.manifest(i + 1) if i + 1 < len(pts) else now
            found.update(_changed(self.manifest(i), after))
        return sorted(found)

    def can_forward(self) -> bool:
        """The last thing recorded is a rewind (its own "end" point after it, nothing else)."""
        if not self.rewinds:
            return False
        at, last = self.rewinds[-1]
        if last.forward:
            return False  # forward undoes one rewind, once (a rewind again is a new one)
        rest = self.points[at:]
        return all(p.at == "end" for p in rest)

    def last_rewind_point(self) -> int:
        """The "rewind" point the last rewind took before it ran: forward goes back to it."""
        at, _ = self.rewinds[-1]
        for i in range(at - 1, -1, -1):
            if self.points[i].at == "rewind":
                return i
        raise LookupError("no rewind to go forward from")

    def rows(self, *, commands: bool = False) -> list[TurnRow]:
        """The turns (and with `commands`, the person's `!cmd`s), oldest first, with what each
        changed: the files between its point and the one after it, and their +/- lines."""
        out: list[TurnRow] = []
        n = k = 0
        for i, p in enumerate(self.points):
            if p.at == "command" and commands:
                k += 1
                current, label = self.reachable(i), f"{n}.{k}"
            elif p.at == "turn":
                n, k = n + 1, 0
                current, label = n in self.current, str(n)
            else:
                continue
            end = i + 1 if i + 1 < len(self.points) else None
            try:
                before = self.manifest(i)
                after = self.manifest(end) if end is not None else before
                files = _changed(before, after)
                plus, minus = self._lines(before, after, files)
            except LookupError:
                files, plus, minus = [], 0, 0
            out.append(TurnRow(n, p, files, plus, minus, current, label))
        return out

    def _lines(self, before: Manifest, after: Manifest, files: Iterable[str]) -> tuple[int, int]:
        plus = minus = 0
        for rel in files:
            a, b = self._text(before.get(rel)), self._text(after.get(rel))
            if a is None or b is None:
                continue
            for line in difflib.unified_diff(a, b, n=0, lineterm=""):
                if line.startswith("+") and not line.startswith("+++"):
                    plus += 1
                elif line.startswith("-") and not line.startswith("---"):
                    minus += 1
        return plus, minus

    def _text(self, e: Entry | None) -> list[str] | None:
        if e is None:
            return []
        if e[0] == NOT_CAPTURED:
            return None
        try:
            data = self.store.get(e[0])
        except (BlobMissing, ValueError):
            return None
        if len(data) > DIFF_MAX or b"\0" in data[:8192]:
            return None
        return data.decode("utf-8", "replace").splitlines()


def _changed(a: Mapping[str, Entry], b: Mapping[str, Entry]) -> list[str]:
    return sorted({*(r for r, e in b.items() if a.get(r) != e), *(r for r in a if r not in b)})


def read_points(workspace: Path, session_id: str, store: BlobStore) -> Points:
    """The session's points and rewinds, from the lines this harness sealed for the person."""
    pts = Points(store)
    sealed = sealed_by(load_key(create=False), session_id, workspace)
    with open_log(workspace, session_id) as f:
        for obj in iter_lines(f, sealed):
            if obj is None:
                continue
            try:
                pts.line(obj)
            except (KeyError, ValueError, TypeError):
                continue
    return pts


__all__ = ["POINT", "REWIND", "Point", "Points", "TurnRow", "differs", "read_points"]
