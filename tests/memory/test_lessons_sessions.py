"""Lessons end to end: mined from scripted breaker and gate scenarios run through the real CLI
(each run one session), stored once however often they recur, and recalled in a SECOND session:
the lesson's text is in that session's first request to the model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.memory.store import LessonStore
from cerveau_tui.testing.scripted_server import ScriptedServer


def run_cli(ws: Path, script: list[dict[str, Any]], task: str) -> tuple[list[dict], list[dict]]:
    """One headless session; (its events, the requests the scripted model received)."""
    env = {**os.environ, "CERVEAU_CONFIG": str(ws.parent / "no-user-config.toml")}
    with ScriptedServer(script) as srv:
        proc = subprocess.run(
            [sys.executable, "-m", "cerveau_tui", "run", "--json", "--workspace", str(ws)]
            # The gate's criteria are commands: a workspace config applies them once trusted.
            + ["--server", srv.url, "--trust-workspace-config", task],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        requests = list(srv.requests)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert events, proc.stderr[-2000:]
    return events, requests


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def of(events: list[dict], type_: str) -> list[dict]:
    return [e["payload"] for e in events if e["type"] == type_]


def first_request_text(requests: list[dict]) -> str:
    return "\n".join(str(m.get("content") or "") for m in requests[0]["messages"])


# Three ways of asking for one absent program (the breaker counts the shape, not the command),
# then what worked.
BREAKER_SESSION = [
    bash("leftpadx --help"),
    bash("leftpadx -v"),
    bash("leftpadx pad names.txt"),
    bash("python3 -c 'print(1)'"),
    {"content": "Padded with python instead."},
]
LESSON = (
    "`missing dependency: leftpadx` kept failing; what worked after it: `python3 -c 'print(1)'`"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "names.txt").write_text("ada\n")
    return path


def test_a_breaker_lesson_is_stored_and_said(ws: Path) -> None:
    events, _ = run_cli(ws, BREAKER_SESSION, "pad the names with leftpadx")
    assert [t["reason"] for t in of(events, "guard_tripped")] == ["missing dependency: leftpadx"]
    (said,) = of(events, "lessons")
    assert [x["text"] for x in said["stored"]] == [LESSON]


def test_a_breaker_lesson_is_recalled_in_the_next_session(ws: Path) -> None:
    run_cli(ws, BREAKER_SESSION, "pad the names with leftpadx")
    events, requests = run_cli(ws, [{"content": "ok"}], "use leftpadx on names.txt again")
    assert LESSON in first_request_text(requests)
    assert any(LESSON in r["text"] for r in of(events, "reminder"))


def test_an_unrelated_task_in_another_stack_is_not_reminded(ws: Path) -> None:
    run_cli(ws, BREAKER_SESSION, "pad the names with leftpadx")
    (ws / "package.json").write_text('{"name": "x"}')  # now a Node project
    _, requests = run_cli(ws, [{"content": "ok"}], "write a haiku")
    assert "leftpadx" not in first_request_text(requests)


def test_the_same_lesson_twice_is_stored_once_and_counted(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_cli(ws, BREAKER_SESSION, "pad the names with leftpadx")
    events, _ = run_cli(ws, BREAKER_SESSION, "pad the names with leftpadx")
    assert of(events, "lessons") == []  # nothing new the second time
    # Read as the same person the CLI ran as (the store is sealed with that person's key).
    monkeypatch.setenv("CERVEAU_CONFIG", str(ws.parent / "no-user-config.toml"))
    store = LessonStore(ws)
    assert [(x.text, x.seen) for x in store.lessons()] == [(LESSON, 2)]
    store.close()


# --- a gate scenario: a Node project whose check fails, an edit, green ---------------------------

BROKEN = "exports.add = (a, b) => a - b;\n"
TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { add } = require('../index.js');\n"
    "test('adds', () => {\n  assert.strictEqual(add(1, 2), 3);\n});\n"
)
FIX = {
    "tool_calls": [
        {"name": "edit_file", "arguments": {"path": "index.js", "old": "a - b", "new": "a + b"}}
    ]
}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_gate_lesson_is_recalled_when_the_same_check_fails_again(ws: Path) -> None:
    (ws / "package.json").write_text(
        json.dumps({"name": "calc", "scripts": {"test": "node --test"}})
    )
    (ws / "index.js").write_text(BROKEN)
    (ws / "test").mkdir()
    (ws / "test" / "add.test.js").write_text(TEST)
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "config.toml").write_text(
        '[[done.criteria]]\nname = "tests"\ncommand = "npm test"\n'
    )
    events, _ = run_cli(ws, [FIX, {"content": "Fixed add."}], "make the tests pass")
    (end,) = of(events, "turn_ended")  # lessons are mined after it, and said after it
    assert end["verification"] == "passed"
    (said,) = of(events, "lessons")
    (stored,) = said["stored"]
    assert stored["kind"] == "gate" and stored["text"].endswith("went away after editing index.js")
    # keyed on the test that failed (the check event's error lines), not on "tests: unmet"
    assert "adds" in stored["text"] and "unmet" not in stored["text"], stored["text"]
    (ws / "index.js").write_text(BROKEN)  # the person breaks it again
    _, requests = run_cli(ws, [FIX, {"content": "Fixed."}], "the build is red")
    assert stored["text"] in first_request_text(requests)
