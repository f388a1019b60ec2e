from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.plan.persist import (
    SessionLog,
    SessionNotFound,
    list_sessions,
    load_events,
)
from cerveau_tui.plan.report_cli import report_command


def _session(ws: Path, sid: str) -> SessionLog:
    bus = Emitter(sid)
    log = SessionLog(ws, sid)
    bus.subscribe(log)
    bus.emit("token", {"text": "hi"})
    bus.emit(
        "plan_committed",
        {"source": "tool", "steps": [{"id": "1", "title": "parser", "files": ["p.py"]}]},
    )
    bus.emit(
        "tool_result",
        {"call_id": "c", "name": "write_file", "ok": True, "output": "", "wrote": ["p.py"]},
    )
    log.close()
    return log


def test_events_are_appended_as_json_lines_without_tokens(tmp_path: Path) -> None:
    log = _session(tmp_path, "abc")
    lines = [json.loads(line) for line in log.path.read_text().splitlines()]
    assert log.path == tmp_path / ".cerveau" / "sessions" / "abc.jsonl"
    # Besides events the log holds records (`kind`: the header, history messages, grants).
    assert [line["type"] for line in lines if "kind" not in line] == [
        "plan_committed",
        "tool_result",
    ]
    assert [e.type for e in load_events(tmp_path, "abc")] == ["plan_committed", "tool_result"]


def test_latest_session_is_loaded_by_default(tmp_path: Path) -> None:
    _session(tmp_path, "old")
    _session(tmp_path, "new")
    os.utime(tmp_path / ".cerveau/sessions/old.jsonl", ns=(1, 1))
    assert list_sessions(tmp_path) == ["old", "new"]
    assert load_events(tmp_path)[0].session_id == "new"


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    log = _session(tmp_path, "abc")
    with open(log.path, "a") as f:
        f.write('{"type": "checkpo')
    assert len(load_events(tmp_path, "abc")) == 2


def test_report_command_prints_the_reconciled_plan(tmp_path: Path) -> None:
    _session(tmp_path, "abc")
    (tmp_path / "p.py").write_text("done")
    code, text = report_command(tmp_path, None, as_json=False)
    assert code == 0 and "1/1 done" in text and "done on disk, not confirmed" in text


def test_report_command_json_has_steps_with_id_title_status_files(tmp_path: Path) -> None:
    _session(tmp_path, "abc")
    code, text = report_command(tmp_path, "abc", as_json=True)
    data = json.loads(text)
    assert code == 0 and data["session"] == "abc"
    assert [{k: s[k] for k in ("id", "title", "status", "files")} for s in data["steps"]] == [
        {"id": "1", "title": "parser", "status": "pending", "files": ["p.py"]}
    ]


def test_report_command_without_sessions_fails_with_a_reason(tmp_path: Path) -> None:
    code, text = report_command(tmp_path, None, as_json=False)
    assert code == 1 and "no sessions" in text
    assert report_command(tmp_path, "../x", as_json=True)[0] == 1


def test_a_planted_sessions_link_receives_no_log_and_is_reported(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "sessions").symlink_to(out)
    log = _session(ws, "abc")
    assert list(out.iterdir()) == []
    assert (ws / ".cerveau" / "sessions" / "abc.jsonl").is_file()
    assert [(m.path, m.pointed_to) for m in log.moved_aside] == [(".cerveau/sessions", str(out))]


def test_a_planted_link_at_the_log_file_itself_is_moved_aside(tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    (tmp_path / "ws" / ".cerveau" / "sessions").mkdir(parents=True)
    (tmp_path / "ws" / ".cerveau" / "sessions" / "abc.jsonl").symlink_to(target)
    log = _session(tmp_path / "ws", "abc")
    assert target.read_text() == "precious\n"
    assert [m.moved_to for m in log.moved_aside] == [".cerveau/sessions/abc.jsonl.suspect-1"]


def test_loading_refuses_to_read_through_a_planted_sessions_link(tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    elsewhere.mkdir()
    _session(elsewhere, "abc")
    (ws / ".cerveau").mkdir(parents=True)
    (ws / ".cerveau" / "sessions").symlink_to(elsewhere / ".cerveau" / "sessions")
    with pytest.raises(SessionNotFound, match="symbolic link"):
        load_events(ws, "abc")
    assert report_command(ws, None, as_json=False)[0] == 1


def test_a_linked_session_file_is_not_a_session(tmp_path: Path) -> None:
    _session(tmp_path, "real")
    (tmp_path / ".cerveau/sessions/fake.jsonl").symlink_to(
        tmp_path / ".cerveau/sessions/real.jsonl"
    )
    assert list_sessions(tmp_path) == ["real"]
    with pytest.raises(SessionNotFound):
        load_events(tmp_path, "fake")
