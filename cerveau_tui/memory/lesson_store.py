"""Where lessons live: a `lessons` table in the workspace's memory database (`.cerveau/memory.sqlite`,
the memory store's file), one row per failure-to-fix pair, deduplicated, bounded.

Opened the way the memory store opens it (memory/store.py says why): `.cerveau` beneath the
workspace without following links, the database and its side files refused as links (moved
aside), the file named through `/proc/self/fd/<dir fd>`. Its own connection, so the lessons never
reach into the note store's private state; SQLite's WAL lets the two share the file.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..workspace.beneath import lstat_beneath
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
        self._dir_fd, self.moved_aside = memory_dir(Path(workspace))
        self._clock = clock
        self._lock = threading.Lock()
        proc = f"/proc/self/fd/{self._dir_fd}"
        where = f"{proc}/{DB}" if os.path.isdir(proc) else str(Path(workspace) / ".cerveau" / DB)
        self._db = sqlite3.connect(where, check_same_thread=False, timeout=5.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)

    @staticmethod
    def exists(workspace: Path) -> bool:
        """Whether there can be lessons to recall: reading must not create the database."""
        st = lstat_beneath(Path(workspace), f".cerveau/{DB}")
        return st is not None and stat.S_ISREG(st.st_mode)

    def add(self, draft: LessonDraft) -> tuple[Lesson, bool]:
        """Store a lesson; one already known is counted again instead. (lesson, True when new)."""
        now = self._clock()
        with self._lock, self._db:
            cur = self._db.execute(
                "UPDATE lessons SET seen = seen + 1, updated = ? WHERE key = ?", (now, draft.key)
            )
            new = not cur.rowcount
            if new:
                self._db.execute(
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
                self._db.execute(
                    "DELETE FROM lessons WHERE id NOT IN (SELECT id FROM lessons"
                    " ORDER BY seen DESC, updated DESC, id DESC LIMIT ?)",
                    (MAX_LESSONS,),
                )
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM lessons WHERE key = ?", (draft.key,)
            ).fetchone()
        return _lesson(row), new

    def lessons(self) -> list[Lesson]:
        """Every stored lesson, most confirmed first, then newest."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM lessons ORDER BY seen DESC, updated DESC, id"
            ).fetchall()
        out = []
        for r in rows:
            try:
                out.append(_lesson(r))
            except ValueError:  # a row this version cannot read is skipped, not fatal
                continue
        return out

    def forget(self, lesson_id: int) -> bool:
        with self._lock, self._db:
            return bool(self._db.execute("DELETE FROM lessons WHERE id = ?", (lesson_id,)).rowcount)

    def close(self) -> None:
        with self._lock:
            self._db.close()
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
