"""Undo: put back what a turn's file tools changed.

Before a file tool first touches a path in a turn, its content (or its absence) is put in the blob
store. Undoing a turn restores those, atomically per file. A command (bash) can change anything,
and copying the whole workspace before every command would cost more than it saves; so what a
command changed is detected by fingerprint and REPORTED as not restorable, never silently skipped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .git.change import guard_for
from .restore.store import BlobStore, RestoreRefused


@dataclass
class TurnChanges:
    turn_id: str
    before: dict[str, str | None] = field(default_factory=dict)  # rel path -> digest (None: absent)
    by_command: bool = False  # a command ran this turn: it may have changed more
    outside: list[str] = field(default_factory=list)  # approved writes outside the workspace


@dataclass
class UndoResult:
    turn_id: str
    restored: list[str]  # every path put back as it was before the turn, removals included
    not_restorable: list[str]  # changed by a command this turn, not by a file tool
    conflicts: list[str] = field(default_factory=list)
    guarded: str = ""  # what the git guard undid of this undo, when it undid anything
    removed: list[str] = field(default_factory=list)  # of `restored`: absent before, so deleted


class UndoLog:
    def __init__(self, store: BlobStore, depth: int = 20) -> None:
        self.store = store
        self.depth = depth
        self._turns: list[TurnChanges] = []
        self._lock = threading.Lock()
        #: Told each change as a plain record ({"op": "before" | "command" | "pop", ...}) so the
        #: session log can rebuild this after a restart (`replay`): the blobs are on disk, but
        #: which blob was which file before which turn was only in this process's memory.
        self.listener: Callable[[dict[str, Any]], None] | None = None

    def _tell(self, record: dict[str, Any]) -> None:
        if self.listener is not None:
            self.listener(record)

    def replay(self, records: Iterable[dict[str, Any]]) -> None:
        """Rebuild the turns from the listener's records, in their order (a resumed session)."""
        with self._lock:
            for r in records:
                turn_id = str(r.get("turn_id", ""))
                op = r.get("op")
                if op == "pop":
                    if self._turns and self._turns[-1].turn_id == turn_id:
                        self._turns.pop()
                    continue
                tc = self._current(turn_id)
                if op == "command":
                    tc.by_command = True
                elif op == "before":
                    before = r.get("before") or {}
                    for rel, digest in before.items():
                        if not isinstance(rel, str) or not (
                            digest is None or isinstance(digest, str)
                        ):
                            continue
                        if _harness_or_git_state(self.store.workspace, rel):
                            continue  # never a file tool's write: a log from elsewhere
                        tc.before.setdefault(rel, digest)
                    tc.outside.extend(
                        str(p) for p in r.get("outside") or () if str(p) not in tc.outside
                    )

    def turns(self) -> list[TurnChanges]:
        with self._lock:
            return [
                TurnChanges(t.turn_id, dict(t.before), t.by_command, list(t.outside))
                for t in self._turns
            ]

    def _current(self, turn_id: str) -> TurnChanges:
        if not self._turns or self._turns[-1].turn_id != turn_id:
            self._turns.append(TurnChanges(turn_id))
            del self._turns[: -self.depth]
        return self._turns[-1]

    def before_write(self, turn_id: str, paths: list[Path]) -> None:
        with self._lock:
            tc = self._current(turn_id)
            inside: list[Path] = []
            outside: list[Path] = []
            for p in paths:
                (inside if _is_inside(self.store.workspace, p) else outside).append(p)
            # A write the person approved outside the workspace is not ours to keep copies of;
            # undo reports it instead of pretending.
            fresh = [p for p in inside if self.store.rel(p) not in tc.before]
            new_outside = [str(p) for p in outside if str(p) not in tc.outside]
            tc.outside.extend(new_outside)
            taken = self.store.snapshot_files(fresh) if fresh else {}
            tc.before.update(taken)
        if taken or new_outside:
            self._tell(
                {"op": "before", "turn_id": turn_id, "before": taken, "outside": new_outside}
            )

    def command_ran(self, turn_id: str) -> None:
        with self._lock:
            tc = self._current(turn_id)
            told, tc.by_command = not tc.by_command, True
        if told:
            self._tell({"op": "command", "turn_id": turn_id})

    def drop_turns(self, turn_ids: Iterable[str]) -> None:
        """Forget the turns a rewind put back (session/rewind/): their before-images are of a
        workspace that no longer is. Popped from the end, each told as a `pop`."""
        gone = set(turn_ids)
        while True:
            with self._lock:
                if not self._turns or self._turns[-1].turn_id not in gone:
                    return
                tc = self._turns.pop()
            self._tell({"op": "pop", "turn_id": tc.turn_id})

    def can_undo(self) -> bool:
        with self._lock:
            return bool(self._turns)

    def undo_last(self, changed_since: list[str] | None = None) -> UndoResult | None:
        """Restore the last recorded turn. `changed_since` lists paths the fingerprint says changed
        during that turn; those not covered by a file tool are reported as not restorable."""
        with self._lock:
            if not self._turns:
                return None
            tc = self._turns.pop()
        self._tell({"op": "pop", "turn_id": tc.turn_id})

        def restore() -> list[str]:
            try:
                self.store.restore(tc.before)
            except RestoreRefused as exc:
                # A link now on the way to a file: restoring through it would write where it
                # points. The rest is back; these are reported, not followed.
                return exc.paths
            return []

        # Through the git guard like every write: the blobs and the log that names them sit in
        # the workspace, and a restored `.husky/pre-commit` or included config would run at the
        # person's next git. What it undoes is not restored, and said.
        refused, verdict = guard_for(self.store.workspace).change(list(tc.before), restore)
        if verdict:
            refused = sorted({*refused, *tc.before})
        covered = set(tc.before) - set(refused)
        others = (
            sorted(p for p in (changed_since or []) if p not in covered) if tc.by_command else []
        )
        return UndoResult(
            tc.turn_id,
            sorted(covered),
            sorted({*others, *tc.outside, *refused}),
            guarded=verdict.note(self.store.workspace, "this undo") if verdict else "",
            removed=sorted(p for p in covered if tc.before.get(p) is None),
        )


def _harness_or_git_state(workspace: Path, rel: str) -> bool:
    """A path the file tools refuse to write (tools/base.refuse_state_write: `.git` at any depth,
    `.cerveau/` at the top, case-insensitive), so no undo record of ours ever names one. The log
    sits in the workspace and a cloned repository can plant one: a replayed `.git/config` with
    `core.fsmonitor` set would run code at the person's next `git status` after an undo."""
    p = Path(rel)
    if p.is_absolute():
        try:
            p = p.relative_to(workspace)
        except ValueError:
            return False  # outside: the restore refuses it (OutsideWorkspace)
    parts = [x.casefold() for x in p.as_posix().split("/") if x and x != "."]
    return ".git" in parts or (bool(parts) and parts[0] == ".cerveau")


def _is_inside(root: Path, path: Path) -> bool:
    p = Path(os.path.realpath(path))
    return p == root or root in p.parents
