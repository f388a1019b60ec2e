"""`cerveau run --resume` and `cerveau sessions` through the real CLI on the scripted server: the
interface the acceptance checks and the crash harness use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer

WRITE_THEN_ANSWER = {
    "responses": [
        {
            "tool_calls": [
                {
                    "name": "write_file",
                    "arguments": {"path": "a.txt", "content": "code word: PELICAN\n"},
                }
            ]
        },
        {"content": "Wrote it."},
    ]
}
ANSWER = {"responses": [{"content": "The code word was PELICAN."}]}


def sessions(ws: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "sessions", "--workspace", str(ws), *extra],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_first_request_of_a_resumed_run_carries_the_conversation_and_tool_results(tmp_path):
    with ScriptedServer(WRITE_THEN_ANSWER) as srv:
        code, _, err = run_cli(tmp_path, srv.url, "remember the code word PELICAN")
    assert code == 0, err
    with ScriptedServer(ANSWER) as srv:
        code, _, err = run_cli(tmp_path, srv.url, "what was the code word?", "--resume", "last")
        messages = srv.requests[0]["messages"]
    assert code == 0, err
    roles = [(m["role"], m.get("content") or "") for m in messages]
    assert ("user", "remember the code word PELICAN") in roles
    tool_results = [m for m in messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == ["created a.txt (1 lines, 19 bytes)"]
    assert ("assistant", "Wrote it.") in roles
    assert roles[-1] == ("user", "what was the code word?")


def test_a_resumed_run_keeps_the_session_id_and_appends_to_its_log(tmp_path):
    with ScriptedServer(WRITE_THEN_ANSWER) as srv:
        code, first, err = run_cli(tmp_path, srv.url, "one")
    assert code == 0, err
    with ScriptedServer(ANSWER) as srv:
        code, second, err = run_cli(tmp_path, srv.url, "two", "--continue")
    assert code == 0, err
    assert {e["session_id"] for e in second} == {first[0]["session_id"]}
    assert min(e["seq"] for e in second) > max(e["seq"] for e in first)
    resumed = [e["payload"] for e in second if e["type"] == "session_resumed"]
    assert resumed and resumed[0]["turns"] == 1 and resumed[0]["messages"] >= 4
    assert len(list((tmp_path / ".cerveau/sessions").glob("*.jsonl"))) == 1


def test_sessions_json_lists_each_session_with_its_id_newest_first(tmp_path):
    with ScriptedServer(ANSWER) as srv:
        _, a, _ = run_cli(tmp_path, srv.url, "first task")
    with ScriptedServer(ANSWER) as srv:
        _, b, _ = run_cli(tmp_path, srv.url, "second task")
    out = sessions(tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    assert [s["id"] for s in listed] == [b[0]["session_id"], a[0]["session_id"]]
    assert listed[0]["first_task"] == "second task" and listed[0]["turns"] == 1
    assert listed[0]["status"] == "ended"
    assert {"id", "started", "last_active", "first_task", "turns", "status"} <= set(listed[0])


def test_resuming_a_bad_id_says_so_on_stderr_without_a_traceback(tmp_path):
    code, events, err = run_cli(tmp_path, "http://127.0.0.1:9", "x", "--resume", "nosuch")
    assert code != 0 and events == []
    assert "cannot resume" in err and "Traceback" not in err


def test_resuming_with_no_sessions_says_so_on_stderr(tmp_path):
    code, _, err = run_cli(tmp_path, "http://127.0.0.1:9", "x", "--resume", "last")
    assert code != 0 and "no sessions" in err and "Traceback" not in err
