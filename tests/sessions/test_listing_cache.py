"""The palette lists the sessions each time it opens: an unchanged log is not folded again, a
changed one is, and whether a session is live is always asked afresh."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.plan.persist import SessionLog
from cerveau_tui.session import listing


def _turn(ws: Path, sid: str, task: str) -> SessionLog:
    bus, log = Emitter(sid), SessionLog(ws, sid)
    bus.subscribe(log)
    bus.turn_id = task
    bus.emit("turn_started", {"input": task})
    bus.emit("turn_ended", {"reason": "completed", "iterations": 1})
    return log


@pytest.fixture
def folds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the logs folded, in order."""
    seen: list[str] = []

    class Counting(listing.Reader):
        def __init__(self, session_id: str, *, full: bool = True) -> None:
            seen.append(session_id)
            super().__init__(session_id, full=full)

    monkeypatch.setattr(listing, "Reader", Counting)
    return seen


def test_an_unchanged_log_is_read_once_across_listings(tmp_path: Path, folds: list[str]) -> None:
    _turn(tmp_path, "s1", "first").close()
    listing.list_sessions(tmp_path)
    listing.list_sessions(tmp_path)
    assert folds == ["s1"]


def test_a_log_written_since_is_read_again(tmp_path: Path, folds: list[str]) -> None:
    _turn(tmp_path, "s1", "first").close()
    before = listing.list_sessions(tmp_path)[0].turns
    _turn(tmp_path, "s1", "second").close()
    assert (before, listing.list_sessions(tmp_path)[0].turns) == (1, 2)


def test_a_live_session_reads_active_from_a_cached_summary(
    tmp_path: Path, folds: list[str]
) -> None:
    _turn(tmp_path, "s1", "first").close()
    listing.list_sessions(tmp_path)
    held = SessionLog(tmp_path, "s1")  # opened again: nothing written, the lock taken
    try:
        status = listing.list_sessions(tmp_path)[0].status
    finally:
        held.close()
    assert (status, folds) == ("active", ["s1"])
