"""A log a crash left: a torn last line, a turn that started and never ended."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cerveau_tui.bus import Emitter
from cerveau_tui.plan.persist import SessionLog
from cerveau_tui.plan.state import PlanState
from cerveau_tui.session.listing import list_sessions
from cerveau_tui.session.resume import CUT_TURN_MESSAGE, UNFINISHED_CALL
from cerveau_tui.session.stored import TRANSCRIPT_TURNS, read_session
from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import open_session, write


def same_person() -> dict[str, str]:
    """The CLI run as the person whose in-process session wrote the log: their config dir, so
    their key (a log sealed by another key is foreign, and never resumed)."""
    return {"CERVEAU_CONFIG": os.environ["CERVEAU_CONFIG"]}


TWO_WRITES = {
    "responses": [write("a.txt", "a\n"), write("b.txt", "b\n"), {"content": "both written"}]
}


def _stored_session(ws: Path) -> Path:
    with ScriptedServer(TWO_WRITES) as srv:
        s, _ = open_session(ws, srv.url)
        try:
            s.engine.run("write a and b")
        finally:
            s.close()
    (log,) = (ws / ".cerveau/sessions").glob("*.jsonl")
    return log


def _cut_after_the_call_to(log: Path, path: str) -> None:
    """The log as a kill -9 leaves it while `path` was being written: the reply calling the tool
    is in, its result is not, and the last line is half-written."""
    lines = log.read_text().splitlines(keepends=True)
    for i, line in enumerate(lines):
        rec = json.loads(line)
        m = rec.get("m") or {}
        calls = json.dumps(m.get("tool_calls") or [])
        if rec.get("kind") == "message" and path in calls:
            log.write_text("".join(lines[: i + 1]) + '{"type": "tool_started", "sess')
            return
    raise AssertionError(f"no call to {path} in the log")


def test_a_torn_last_line_is_skipped_and_counted_and_the_rest_reads(tmp_path: Path) -> None:
    log = _stored_session(tmp_path)
    whole = read_session(tmp_path, log.stem)
    with log.open("a") as f:
        f.write('{"kind": "message", "m": {"role": "us')
    torn = read_session(tmp_path, log.stem)
    assert torn.torn == 1 and torn.history == whole.history


def test_a_record_appended_after_a_torn_line_is_not_lost_with_it(tmp_path: Path) -> None:
    log = _stored_session(tmp_path)
    with log.open("a") as f:
        f.write('{"kind": "message", "m": {"role": "us')
    again = SessionLog(tmp_path, log.stem)
    again.append([{"kind": "message", "m": {"role": "user", "content": "after the crash"}}])
    again.close()
    stored = read_session(tmp_path, log.stem)
    assert stored.torn == 1 and stored.history[-1]["content"] == "after the crash"


def test_a_turn_cut_by_a_crash_lists_as_interrupted(tmp_path: Path) -> None:
    log = _stored_session(tmp_path)
    _cut_after_the_call_to(log, "b.txt")
    (summary,) = list_sessions(tmp_path)
    assert summary.status == "interrupted" and summary.torn_lines == 1


def test_resuming_a_cut_turn_answers_its_call_and_tells_the_model(tmp_path: Path) -> None:
    log = _stored_session(tmp_path)
    _cut_after_the_call_to(log, "b.txt")
    with ScriptedServer({"responses": [{"content": "checked"}]}) as srv:
        code, events, err = run_cli(
            tmp_path, srv.url, "go on", "--resume", "last", env=same_person()
        )
        messages = srv.requests[0]["messages"]
    assert code == 0, err
    assert [m["content"] for m in messages[-3:]] == [UNFINISHED_CALL, CUT_TURN_MESSAGE, "go on"]
    assert messages[-3]["role"] == "tool" and messages[-2]["role"] == "user"
    resumed = next(e["payload"] for e in events if e["type"] == "session_resumed")
    assert resumed["interrupted_turn"] and resumed["unfinished_calls"] == 1


def test_after_the_resume_the_cut_turn_is_interrupted_and_the_session_ended(tmp_path: Path) -> None:
    log = _stored_session(tmp_path)
    _cut_after_the_call_to(log, "b.txt")
    with ScriptedServer({"responses": [{"content": "checked"}]}) as srv:
        run_cli(tmp_path, srv.url, "go on", "--resume", "last", env=same_person())
    stored = read_session(tmp_path, log.stem)
    assert [t.reason for t in stored.turns] == ["interrupted", "completed"]
    assert list_sessions(tmp_path)[0].status == "ended"
    said = [m["content"] for m in stored.history]
    assert said.count(CUT_TURN_MESSAGE) == 1 and said.count(UNFINISHED_CALL) == 1


def test_a_session_held_by_a_live_process_lists_as_active_and_cannot_be_resumed(
    tmp_path: Path,
) -> None:
    log = _stored_session(tmp_path)
    held = SessionLog(tmp_path, log.stem)
    try:
        assert list_sessions(tmp_path)[0].status == "active"
        code, _, err = run_cli(
            tmp_path, "http://127.0.0.1:9", "x", "--resume", log.stem, env=same_person()
        )
    finally:
        held.close()
    assert code != 0 and "another cerveau" in err and "Traceback" not in err


def test_the_plan_ledger_keeps_what_the_report_needs_not_every_event(tmp_path: Path) -> None:
    # Was the session log's in-memory copy; the plan ledger is now the one holder (plan/state.py).
    bus = Emitter("big")
    ledger = PlanState(workspace=tmp_path)
    bus.subscribe(ledger)
    bus.emit("plan_committed", {"source": "tool", "steps": [{"id": "1", "title": "t"}]})
    last: dict[str, int] = {}
    for i in range(2000):
        bus.emit("token", {"text": "x"})
        bus.emit(
            "tool_result",
            {"call_id": "b", "name": "bash", "ok": True, "output": "y" * 100, "wrote": []},
        )
        path = f"f{i % 5}.py"
        last[path] = bus.emit(
            "tool_result",
            {"call_id": "w", "name": "write_file", "ok": True, "output": "", "wrote": [path]},
        ).seq
    kept = ledger.report_events()
    assert [e.type for e in kept].count("plan_committed") == 1 and len(kept) == 6
    assert {e.payload["wrote"][0]: e.seq for e in kept if e.type == "tool_result"} == last


def test_the_transcript_of_a_long_session_holds_its_last_turns_and_every_plan_event(
    tmp_path: Path,
) -> None:
    bus = Emitter("long")
    log = SessionLog(tmp_path, "long")
    bus.subscribe(log)
    bus.emit("plan_committed", {"source": "tool", "steps": [{"id": "1", "title": "t"}]})
    for i in range(TRANSCRIPT_TURNS + 50):
        bus.turn_id = f"t{i}"
        bus.emit("turn_started", {"input": f"task {i}"})
        bus.emit("assistant_message", {"content": f"answer {i}"})
        bus.emit("turn_ended", {"reason": "completed", "iterations": 1})
    log.close()
    shown = read_session(tmp_path, "long").transcript()
    inputs = [e.payload["input"] for e in shown if e.type == "turn_started"]
    assert shown[0].type == "plan_committed" and len(inputs) == TRANSCRIPT_TURNS
    assert inputs[-1] == f"task {TRANSCRIPT_TURNS + 49}"


def test_a_turn_cut_by_a_crash_is_undone_after_the_restart(tmp_path: Path) -> None:
    log = _stored_session(tmp_path)
    _cut_after_the_call_to(log, "b.txt")
    with ScriptedServer({"responses": []}) as srv:
        s, rec = open_session(tmp_path, srv.url, resume="last")
        try:
            assert rec.of("session_resumed")[0].payload["last_reason"] == "interrupted"
            result = s.rewinder.rewind_last_turn()
        finally:
            s.close()
    assert sorted(result.removed) == ["a.txt", "b.txt"]
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()


def test_a_line_longer_than_any_the_harness_writes_is_skipped_not_loaded(
    tmp_path: Path, monkeypatch
) -> None:
    import cerveau_tui.plan.persist as persist

    monkeypatch.setattr(persist, "MAX_LINE_CHARS", 4000)
    log = _stored_session(tmp_path)
    whole = read_session(tmp_path, log.stem)
    # Written by the harness (sealed: a hand-appended line is not read back at all).
    again = SessionLog(tmp_path, log.stem)
    big = {"role": "user", "content": "x" * 10000}
    again.append([{"kind": "message", "m": big}])
    again.append([{"kind": "message", "m": {"role": "user", "content": "after"}}])
    again.close()
    stored = read_session(tmp_path, log.stem)
    assert stored.torn == 1
    assert stored.history == [*whole.history, {"role": "user", "content": "after"}]


def test_a_result_logged_before_its_message_is_what_the_resumed_model_reads(
    tmp_path: Path,
) -> None:
    log = _stored_session(tmp_path)
    lines = log.read_text().splitlines(keepends=True)
    at = next(
        i
        for i, line in enumerate(lines)
        if '"type":"tool_result"' in line and '"wrote":["b.txt"]' in line
    )
    log.write_text("".join(lines[: at + 1]))  # killed before the result's history message
    with ScriptedServer({"responses": [{"content": "checked"}]}) as srv:
        code, events, err = run_cli(
            tmp_path, srv.url, "go on", "--resume", "last", env=same_person()
        )
        messages = srv.requests[0]["messages"]
    assert code == 0, err
    assert [m["content"] for m in messages if m["role"] == "tool"] == [
        "created a.txt (1 lines, 2 bytes)",
        "created b.txt (1 lines, 2 bytes)",
    ]
    resumed = next(e["payload"] for e in events if e["type"] == "session_resumed")
    assert resumed["unfinished_calls"] == 0
