"""memory.sqlite has one owner (memory/db.py): notes and lessons read one schema, one set of
checks, and a file from before the lessons table opens with its notes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cerveau_tui.memory.lessons import LessonDraft
from cerveau_tui.memory.store import LessonStore, MemoryStore

DRAFT = LessonDraft(kind="breaker", trigger="leftpad missing", fix="pip install leftpad")


def _raw(ws: Path, sql: str) -> None:
    conn = sqlite3.connect(ws / ".cerveau" / "memory.sqlite")
    with conn:
        conn.executescript(sql)
    conn.close()


def test_a_database_from_before_the_lessons_table_keeps_its_notes(tmp_path: Path) -> None:
    notes = MemoryStore(tmp_path)
    notes.add("fact", "the tests live in tests/")
    notes.close()
    _raw(tmp_path, "DROP TABLE lessons;")  # what a session before lessons wrote
    lessons = LessonStore(tmp_path)
    try:
        assert lessons.moved_aside == []
        stored = lessons.add(DRAFT)
        assert stored is not None and stored[1] is True
    finally:
        lessons.close()
    again = MemoryStore(tmp_path)
    try:
        assert [n.text for n in again.notes()] == ["the tests live in tests/"]
    finally:
        again.close()


def test_a_lessons_table_the_stores_cannot_read_is_set_aside_by_the_notes_too(
    tmp_path: Path,
) -> None:
    MemoryStore(tmp_path).close()
    _raw(tmp_path, "DROP TABLE lessons; CREATE TABLE lessons (only TEXT);")
    notes = MemoryStore(tmp_path)
    try:
        (said,) = (str(m) for m in notes.moved_aside)
        assert "could not be used" in said and "no such column" in said
        assert notes.add("fact", "a fresh file takes notes") is True
    finally:
        notes.close()
    lessons = LessonStore(tmp_path)
    try:
        assert lessons.moved_aside == [] and lessons.lessons() == []
    finally:
        lessons.close()
