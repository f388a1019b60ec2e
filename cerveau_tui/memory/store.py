"""The memory store: SQLite under the workspace's `.cerveau/`, one row per note, deduplicated.

SQLite opens its files by name, following links, with the person's rights. So `.cerveau` is
opened beneath the workspace without following links (a planted link is moved aside:
`moved_aside`), the database and its side files are checked not to be links (moved aside too),
and the database is named through `/proc/self/fd/<dir fd>`, the directory just checked. WAL mode
opens the side files once, at connect, and keeps them open: a `.cerveau` swapped later cannot
redirect a journal created mid-session. The connection itself is db.StateDB's: every query
bounded, and a file that is corrupt or not this harness's (a cloned repository's view that never
ends) moved aside for a fresh one.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..state_home import locate, shown, state_path
from ..workspace.beneath import MovedAside, lstat_beneath, move_aside, open_state_dir
from .db import SetAside, StateDB

DB = "memory.sqlite"
_SIDE_FILES = (DB, f"{DB}-journal", f"{DB}-wal", f"{DB}-shm")

SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,           -- 'fact' | 'lesson'
    text TEXT NOT NULL,
    key TEXT NOT NULL UNIQUE,     -- normalised text, for deduplication
    seen INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
"""


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


_NOTE_COLUMNS = "id, kind, text, seen, created, updated"


class MemoryStore:
    def __init__(self, workspace: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = state_path(workspace, DB)
        self._dir_fd, moved = memory_dir(Path(workspace))
        self.moved_aside: list[MovedAside | SetAside] = list(moved)
        self._clock = clock
        try:
            self._sdb = StateDB(
                self._dir_fd,
                DB,
                shown(workspace, DB),
                SCHEMA,
                probes=[f"SELECT {_NOTE_COLUMNS}, key FROM notes LIMIT 0"],
                clock=clock,
                fallback=str(self.path),
            )
        except BaseException:
            os.close(self._dir_fd)
            raise
        self.moved_aside.extend(self._sdb.take_set_aside())

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

        return self._sdb.run(add, False, write=True)

    def recent(self, limit: int = 8) -> list[tuple[str, str]]:
        """The notes worth carrying into a new session: most confirmed first, then newest."""
        rows: list[tuple[Any, ...]] = self._sdb.run(
            lambda db: db.execute(
                "SELECT kind, text FROM notes ORDER BY seen DESC, updated DESC LIMIT ?", (limit,)
            ).fetchall(),
            [],
        )
        return [(k, t) for k, t in rows]

    def notes(self, limit: int = 200) -> list[Note]:
        """Every note, the ones recalled first (most confirmed, then newest): what the palette
        lists so the person can see what the next session will be told."""
        rows: list[tuple[Any, ...]] = self._sdb.run(
            lambda db: db.execute(
                f"SELECT {_NOTE_COLUMNS} FROM notes ORDER BY seen DESC, updated DESC LIMIT ?",
                (limit,),
            ).fetchall(),
            [],
        )
        return [Note(*row) for row in rows]

    def forget(self, note_id: int) -> bool:
        """Delete one note for good. False when there was no such note."""
        return self._sdb.run(
            lambda db: db.execute("DELETE FROM notes WHERE id = ?", (int(note_id),)).rowcount > 0,
            False,
            write=True,
        )

    def take_set_aside(self) -> list[SetAside]:
        """Databases set aside mid-session (a query aborted or corruption found), to be said."""
        return self._sdb.take_set_aside()

    def now(self) -> float:
        return float(self._clock())

    def close(self) -> None:
        self._sdb.close()
        if self._dir_fd >= 0:
            os.close(self._dir_fd)
            self._dir_fd = -1


def memory_dir(workspace: Path) -> tuple[int, list[MovedAside]]:
    """`.cerveau/` opened beneath the workspace, with any non-file planted where the database
    or its journal go moved aside: the one opening every table of memory.sqlite shares."""
    root, rel = locate(workspace)  # `.cerveau`, or the alternate itself (state_home.py)
    fd, moved = open_state_dir(root, rel)
    try:
        for name in _SIDE_FILES:
            st = lstat_beneath(fd, name)
            if st is not None and not stat.S_ISREG(st.st_mode):
                moved.append(move_aside(fd, name, [rel] if rel else []))
    except BaseException:
        os.close(fd)
        raise
    return fd, moved
