"""Which session `last` is, and what a listing says of each."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.plan.persist import SessionLog
from cerveau_tui.session.listing import ResumeError, list_sessions, resolve_session


def _log(ws: Path, sid: str, *tasks: str, mtime: int) -> None:
    bus, log = Emitter(sid), SessionLog(ws, sid)
    bus.subscribe(log)
    for i, task in enumerate(tasks):
        bus.turn_id = f"t{i}"
        bus.emit("turn_started", {"input": task})
        bus.emit("turn_ended", {"reason": "completed", "iterations": 1})
    log.close()
    os.utime(log.path, ns=(mtime, mtime))


def test_last_is_the_latest_session_with_a_turn_not_an_empty_one_opened_since(
    tmp_path: Path,
) -> None:
    _log(tmp_path, "talk", "fix the parser", mtime=10**18)
    _log(tmp_path, "empty", mtime=2 * 10**18)
    assert resolve_session(tmp_path, "last") == "talk"
    assert resolve_session(tmp_path, "empty") == "empty"


def test_a_listing_is_newest_first_with_turns_and_the_first_task(tmp_path: Path) -> None:
    _log(tmp_path, "old", "first", "second", mtime=10**18)
    _log(tmp_path, "new", "only", mtime=2 * 10**18)
    listed = list_sessions(tmp_path)
    assert [(s.id, s.turns, s.first_task, s.status) for s in listed] == [
        ("new", 1, "only", "ended"),
        ("old", 2, "first", "ended"),
    ]
    assert listed[0].started is not None


def test_an_id_that_is_not_a_session_is_refused_with_the_reason(tmp_path: Path) -> None:
    _log(tmp_path, "real", "x", mtime=10**18)
    with pytest.raises(ResumeError, match="no session 'nope'"):
        resolve_session(tmp_path, "nope")
    with pytest.raises(ResumeError, match="invalid session id"):
        resolve_session(tmp_path, "../real")
