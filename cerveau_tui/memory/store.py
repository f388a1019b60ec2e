"""The memory store: SQLite under the workspace's `.cerveau/`, one row per note, deduplicated."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

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


def normalise(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .")


class MemoryStore:
    def __init__(self, workspace: Path, clock=time.time) -> None:
        self.path = Path(workspace) / ".cerveau" / "memory.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.executescript(SCHEMA)

    def add(self, kind: str, text: str) -> bool:
        """Add a note; a note already known is counted again instead. Returns True when new."""
        key = normalise(text)
        if not key:
            return False
        now = self._clock()
        with self._lock, self._db:
            cur = self._db.execute("UPDATE notes SET seen = seen + 1, updated = ? WHERE key = ?", (now, key))
            if cur.rowcount:
                return False
            self._db.execute(
                "INSERT INTO notes (kind, text, key, created, updated) VALUES (?, ?, ?, ?, ?)",
                (kind, text.strip(), key, now, now),
            )
            return True

    def recent(self, limit: int = 8) -> list[tuple[str, str]]:
        """The notes worth carrying into a new session: most confirmed first, then newest."""
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, text FROM notes ORDER BY seen DESC, updated DESC LIMIT ?", (limit,)
            ).fetchall()
        return [(k, t) for k, t in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
