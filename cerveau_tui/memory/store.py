"""What the person's memory holds, as two typed APIs over the one database (memory/db.py owns the
file: where it is, its schema, its checks, every query bounded): `MemoryStore`, the notes turn
close distils (one row per note, deduplicated), and `LessonStore`, the failure-to-fix pairs
lessons mines (one row per pair, deduplicated, bounded).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .db import LESSON_COLUMNS, NOTE_COLUMNS, MemoryDB, SetAside
from .lessons import Lesson, LessonDraft

#: Beyond this many lessons the least confirmed, oldest ones go: recall reads them all.
MAX_LESSONS = 200


class _Table:
    """One table's API over its own bounded connection to memory.sqlite."""

    def __init__(self, workspace: Path, clock: Callable[[], float] = time.time) -> None:
        self._db = MemoryDB(workspace, clock)
        self._clock = clock
        self.path = self._db.path
        self.moved_aside = self._db.moved_aside

    def take_set_aside(self) -> list[SetAside]:
        """Databases set aside mid-session (a query aborted or corruption found), to be said."""
        return self._db.take_set_aside()

    def close(self) -> None:
        self._db.close()


@dataclass(frozen=True)
class Note:
    """One remembered note, as the person lists it (and forgets it by `id`)."""

    id: int
    kind: str  # 'fact' | 'lesson'
    text: str
    seen: int
    created: float  # epoch seconds, by the store's clock
    updated: float


def normalise(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .")


class MemoryStore(_Table):
    """The notes."""

    def add(self, kind: str, text: str) -> bool:
        """Add a note; a note already known is counted again instead. Returns True when new."""
        key = normalise(text)
        if not key:
            return False
        now = self._clock()

        def add(db: sqlite3.Connection) -> bool:
            cur = db.execute(
                "UPDATE notes SET seen = seen + 1, updated = ? WHERE key = ?", (now, key)
            )
            if cur.rowcount:
                return False
            db.execute(
                "INSERT INTO notes (kind, text, key, created, updated) VALUES (?, ?, ?, ?, ?)",
                (kind, text.strip(), key, now, now),
            )
            return True

        return self._db.run(add, False, write=True)

    def recent(self, limit: int = 8) -> list[tuple[str, str]]:
        """The notes worth carrying into a new session: most confirmed first, then newest."""
        return [(n.kind, n.text) for n in self.notes(limit)]

    def notes(self, limit: int = 200) -> list[Note]:
        """Every note, the ones recalled first (most confirmed, then newest): what the palette
        lists so the person can see what the next session will be told."""
        rows: list[tuple[Any, ...]] = self._db.run(
            lambda db: db.execute(
                f"SELECT {NOTE_COLUMNS} FROM notes ORDER BY seen DESC, updated DESC LIMIT ?",
                (limit,),
            ).fetchall(),
            [],
        )
        return [Note(*row) for row in rows]

    def forget(self, note_id: int) -> bool:
        """Delete one note for good. False when there was no such note."""
        return self._db.run(
            lambda db: db.execute("DELETE FROM notes WHERE id = ?", (int(note_id),)).rowcount > 0,
            False,
            write=True,
        )

    def now(self) -> float:
        return float(self._clock())


class LessonStore(_Table):
    """The lessons."""

    exists = staticmethod(MemoryDB.exists)

    def add(self, draft: LessonDraft) -> tuple[Lesson, bool] | None:
        """Store a lesson; one already known is counted again instead. (lesson, True when new);
        None when the database could not take it (set aside: take_set_aside says why)."""
        now = self._clock()

        def add(db: sqlite3.Connection) -> tuple[tuple[Any, ...] | None, bool]:
            cur = db.execute(
                "UPDATE lessons SET seen = seen + 1, updated = ? WHERE key = ?", (now, draft.key)
            )
            new = not cur.rowcount
            if new:
                db.execute(
                    "INSERT INTO lessons (kind, trigger, fix, stack, words, key, created, updated)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (draft.kind, draft.trigger, draft.fix, draft.stack, draft.words, draft.key,
                     now, now),
                )  # fmt: skip
                db.execute(
                    "DELETE FROM lessons WHERE id NOT IN (SELECT id FROM lessons"
                    " ORDER BY seen DESC, updated DESC, id DESC LIMIT ?)",
                    (MAX_LESSONS,),
                )
            row = db.execute(f"SELECT {LESSON_COLUMNS} FROM lessons WHERE key = ?", (draft.key,))
            return row.fetchone(), new

        done = self._db.run(add, None, write=True)
        if done is None or done[0] is None:
            return None
        try:
            return _lesson(done[0]), done[1]
        except ValueError:  # a planted row under the same key that this version cannot read
            return None

    def lessons(self) -> list[Lesson]:
        """Every stored lesson, most confirmed first, then newest."""
        rows: list[tuple[Any, ...]] = self._db.run(
            lambda db: db.execute(
                f"SELECT {LESSON_COLUMNS} FROM lessons ORDER BY seen DESC, updated DESC, id"
            ).fetchall(),
            [],
        )
        out = []
        for r in rows:
            try:
                out.append(_lesson(r))
            except ValueError:  # a row this version cannot read is skipped, not fatal
                continue
        return out

    def forget(self, lesson_id: int) -> bool:
        return self._db.run(
            lambda db: bool(db.execute("DELETE FROM lessons WHERE id = ?", (lesson_id,)).rowcount),
            False,
            write=True,
        )


def _lesson(row: tuple[Any, ...]) -> Lesson:
    id_, kind, trigger, fix, stack, seen, created, updated = row
    return Lesson(
        id=id_, kind=kind, trigger=trigger, fix=fix, stack=stack, seen=seen, created=created,
        updated=updated,
    )  # fmt: skip
