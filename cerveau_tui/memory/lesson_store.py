"""Where lessons live: a `lessons` table in the workspace's memory database (`.cerveau/memory.sqlite`,
the memory store's file), one row per failure-to-fix pair, deduplicated, bounded.

Opened the way the memory store opens it (memory/store.py says why): `.cerveau` beneath the
workspace without following links, the database and its side files refused as links (moved
aside), the file named through `/proc/self/fd/<dir fd>`. Its own connection, so the lessons never
reach into the note store's private state; SQLite's WAL lets the two share the file. Every
query is bounded and a bad file set aside, as db.StateDB does for both.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..state_home import locate, shown, state_path
from ..workspace.beneath import MovedAside, lstat_beneath
from .db import SetAside, StateDB
from .lessons import Lesson, LessonDraft
from .store import DB, memory_dir

#: Beyond this many lessons the least confirmed, oldest ones go: recall reads them all.
MAX_LESSONS = 200

SCHEMA = """
CREATE TABLE IF NOT EXISTS lessons (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,           -- 'breaker' | 'gate' | 'denied'
    trigger TEXT NOT NULL,        -- what failed
    fix TEXT NOT NULL,            -- what then worked
    stack TEXT NOT NULL DEFAULT '',
    words TEXT NOT NULL DEFAULT '',
    key TEXT NOT NULL UNIQUE,     -- for deduplication
    seen INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
"""
_COLUMNS = "id, kind, trigger, fix, stack, seen, created, updated"


class LessonStore:
    def __init__(self, workspace: Path, clock: Callable[[], float] = time.time) -> None:
        self._dir_fd, moved = memory_dir(Path(workspace))
        self.moved_aside: list[MovedAside | SetAside] = list(moved)
        self._clock = clock
        try:
            self._sdb = StateDB(
                self._dir_fd,
                DB,
                shown(workspace, DB),
                SCHEMA,
                probes=[f"SELECT {_COLUMNS}, words, key FROM lessons LIMIT 0"],
                clock=clock,
                fallback=str(state_path(workspace, DB)),
            )
        except BaseException:
            os.close(self._dir_fd)
            raise
        self.moved_aside.extend(self._sdb.take_set_aside())

    @staticmethod
    def exists(workspace: Path) -> bool:
        """Whether there can be lessons to recall: reading must not create the database."""
        st = lstat_beneath(*locate(workspace, DB))
        return st is not None and stat.S_ISREG(st.st_mode)

    def add(self, draft: LessonDraft) -> tuple[Lesson, bool] | None:
        """Store a lesson; one already known is counted again instead. (lesson, True when new);
        None when the database could not take it (set aside: take_set_aside says why)."""
        now = self._clock()

        def add(db: sqlite3.Connection) -> tuple[tuple, bool]:
            cur = db.execute(
                "UPDATE lessons SET seen = seen + 1, updated = ? WHERE key = ?", (now, draft.key)
            )
            new = not cur.rowcount
            if new:
                db.execute(
                    "INSERT INTO lessons (kind, trigger, fix, stack, words, key, created, updated)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        draft.kind,
                        draft.trigger,
                        draft.fix,
                        draft.stack,
                        draft.words,
                        draft.key,
                        now,
                        now,
                    ),
                )
                db.execute(
                    "DELETE FROM lessons WHERE id NOT IN (SELECT id FROM lessons"
                    " ORDER BY seen DESC, updated DESC, id DESC LIMIT ?)",
                    (MAX_LESSONS,),
                )
            row = db.execute(f"SELECT {_COLUMNS} FROM lessons WHERE key = ?", (draft.key,))
            return row.fetchone(), new

        done = self._sdb.run(add, None, write=True)
        if done is None or done[0] is None:
            return None
        try:
            return _lesson(done[0]), done[1]
        except ValueError:  # a planted row under the same key that this version cannot read
            return None

    def lessons(self) -> list[Lesson]:
        """Every stored lesson, most confirmed first, then newest."""
        rows: list[tuple[Any, ...]] = self._sdb.run(
            lambda db: db.execute(
                f"SELECT {_COLUMNS} FROM lessons ORDER BY seen DESC, updated DESC, id"
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
        return self._sdb.run(
            lambda db: bool(db.execute("DELETE FROM lessons WHERE id = ?", (lesson_id,)).rowcount),
            False,
            write=True,
        )

    def take_set_aside(self) -> list[SetAside]:
        """Databases set aside mid-session (a query aborted or corruption found), to be said."""
        return self._sdb.take_set_aside()

    def close(self) -> None:
        self._sdb.close()
        if self._dir_fd >= 0:
            os.close(self._dir_fd)
            self._dir_fd = -1


def _lesson(row: tuple) -> Lesson:
    id_, kind, trigger, fix, stack, seen, created, updated = row
    return Lesson(
        id=id_,
        kind=kind,
        trigger=trigger,
        fix=fix,
        stack=stack,
        seen=seen,
        created=created,
        updated=updated,
    )
