"""A Node project's done gate end to end: the node adapter's own check (`npm test`, or `node
--test` when package.json has npm's stub) as the criterion, run in the real sandbox through the
real CLI, on a small project that fails and is then fixed. No registry is ever contacted: the
project has no dependencies and its tests use Node's built-in runner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.adapters.node import NodeAdapter
from cerveau_tui.testing.scripted_server import ScriptedServer

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

BROKEN = "exports.add = (a, b) => a - b;\n"
FIXED = "exports.add = (a, b) => a + b;\n"
TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { add } = require('../index.js');\n\n"
    "test('adds', () => {\n  assert.strictEqual(add(1, 2), 3);\n});\n"
)
STUB = 'echo "Error: no test specified" && exit 1'


def node_project(ws: Path, test_script: str) -> Path:
    ws.mkdir()
    (ws / "package.json").write_text(
        json.dumps({"name": "calc", "version": "1.0.0", "scripts": {"test": test_script}})
    )
    (ws / "index.js").write_text(BROKEN)
    (ws / "test").mkdir()
    (ws / "test" / "add.test.js").write_text(TEST)
    command = NodeAdapter().gate_command(ws)
    assert command is not None
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "config.toml").write_text(
        f'[done]\nprotected = ["test/**"]\n[[done.criteria]]\nname = "tests"\n'
        f"command = {json.dumps(command)}\n"
    )
    return ws


def run_cli(ws: Path, url: str, task: str, *extra: str) -> list[dict[str, Any]]:
    env = {**os.environ, "CERVEAU_CONFIG": str(ws.parent / "no-user-config.toml")}
    proc = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "run", "--json", "--workspace", str(ws)]
        # The criteria are commands: a workspace config applies them once trusted.
        + ["--server", url, "--trust-workspace-config", *extra, task],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert events, proc.stderr[-2000:]
    return events


def of(events: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in events if e["type"] == type_]


def ended(events: list[dict[str, Any]]) -> dict[str, Any]:
    # Not the last event: lessons are mined after the turn ended, and said after it.
    (end,) = of(events, "turn_ended")
    return end


FIX = {
    "tool_calls": [
        {"name": "edit_file", "arguments": {"path": "index.js", "old": "a - b", "new": "a + b"}}
    ]
}


def test_npm_test_is_red_then_green_after_the_fix(tmp_path: Path) -> None:
    ws = node_project(tmp_path / "ws", "node --test")
    with ScriptedServer([FIX, {"content": "Fixed add."}]) as srv:
        events = run_cli(ws, srv.url, "make the tests pass")
    checks = of(events, "check")
    assert [(c["precheck"], c["unmet"]) for c in checks] == [(True, ["tests"]), (False, [])]
    assert checks[0]["errors"] == 1  # the adapter read one failing test out of npm's output
    end = ended(events)
    assert (end["reason"], end["verification"]) == ("completed", "passed")
    assert (ws / "index.js").read_text() == FIXED


def test_a_claim_of_done_without_a_fix_is_refused(tmp_path: Path) -> None:
    ws = node_project(tmp_path / "ws", "node --test")
    with ScriptedServer([{"content": "Fixed."}, FIX, {"content": "Now fixed."}]) as srv:
        events = run_cli(ws, srv.url, "make the tests pass")
        told = srv.requests[1]["messages"][-1]["content"]
    assert told.startswith("[harness]") and "adds" in told
    assert ended(events)["verification"] == "passed"


def test_with_npms_stub_the_node_runner_is_the_gate(tmp_path: Path) -> None:
    ws = node_project(tmp_path / "ws", STUB)
    assert NodeAdapter().gate_command(ws) == "node --test"
    with ScriptedServer([FIX, {"content": "Fixed add."}]) as srv:
        events = run_cli(ws, srv.url, "make the tests pass")
    checks = of(events, "check")
    assert [c["unmet"] for c in checks] == [["tests"], []]
    assert ended(events)["verification"] == "passed"


def test_the_node_check_runs_in_the_sandbox_not_on_the_host(tmp_path: Path) -> None:
    # The gate's command is the sandbox's: a test writing outside the workspace cannot reach the host.
    ws = node_project(tmp_path / "ws", "node --test")
    outside = tmp_path / "outside.txt"
    (ws / "test" / "escape.test.js").write_text(
        "const test = require('node:test');\n"
        f"test('escape', () => {{ require('fs').writeFileSync({json.dumps(str(outside))}, 'x'); }});\n"
    )
    (ws / "index.js").write_text(FIXED)
    with ScriptedServer([{"content": "Nothing to do."}]) as srv:
        events = run_cli(ws, srv.url, "check")
    assert of(events, "check"), "the gate ran"
    assert not outside.exists()  # on the host: what the sandboxed test wrote stayed in the sandbox


def bare_node_project(ws: Path) -> Path:
    """No .cerveau/config.toml at all: what a new user has."""
    ws.mkdir()
    (ws / "package.json").write_text(
        json.dumps({"name": "calc", "scripts": {"test": "node --test"}})
    )
    (ws / "index.js").write_text(BROKEN)
    (ws / "test").mkdir()
    (ws / "test" / "add.test.js").write_text(TEST)
    return ws


def test_gate_auto_on_a_node_project_with_no_config_refuses_a_false_done(tmp_path: Path) -> None:
    ws = bare_node_project(tmp_path / "ws")
    script = [{"content": "Fixed."}, FIX, {"content": "Now fixed."}]
    with ScriptedServer(script) as srv:
        events = run_cli(ws, srv.url, "make the tests pass", "--gate", "auto")
        told = srv.requests[1]["messages"][-1]["content"]
    assert told.startswith("[harness]") and "adds" in told
    (end,) = of(events, "turn_ended")
    assert (end["verification"], end["unmet"]) == ("passed", [])
    assert (ws / "index.js").read_text() == FIXED


def test_doctor_names_the_detected_node_check(tmp_path: Path) -> None:
    ws = bare_node_project(tmp_path / "ws")
    env = {**os.environ, "CERVEAU_CONFIG": str(tmp_path / "no-user-config.toml")}
    proc = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "doctor", "--json", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert "npm test" in proc.stdout, proc.stderr[-2000:]


# A stand-in for the project's own tsc (no registry: the real one would come from npm): it
# reports one type error while src/a.ts still assigns a string to a number.
FAKE_TSC = """#!/bin/sh
if grep -q "= 'one'" src/a.ts; then
  echo "src/a.ts(1,14): error TS2322: Type 'string' is not assignable to type 'number'."
  exit 2
fi
"""


def test_gate_auto_on_typescript_runs_the_projects_tsc_and_reads_its_errors(
    tmp_path: Path,
) -> None:
    ws = bare_node_project(tmp_path / "ws")
    (ws / "index.js").write_text(FIXED)
    (ws / "tsconfig.json").write_text("{}")
    (ws / "src").mkdir()
    (ws / "src" / "a.ts").write_text("const n: number = 'one';\n")
    tsc = ws / "node_modules" / ".bin" / "tsc"
    tsc.parent.mkdir(parents=True)
    tsc.write_text(FAKE_TSC)
    tsc.chmod(0o755)
    assert NodeAdapter().gate_command(ws) == "node_modules/.bin/tsc --noEmit && npm test"
    fix = {
        "tool_calls": [
            {"name": "edit_file", "arguments": {"path": "src/a.ts", "old": "'one'", "new": "1"}}
        ]
    }
    with ScriptedServer([fix, {"content": "Types fixed."}]) as srv:
        events = run_cli(ws, srv.url, "fix the type error", "--gate", "auto")
    checks = of(events, "check")
    assert checks[0]["precheck"] and len(checks[0]["unmet"]) == 1
    assert checks[0]["errors"] == 1  # one error: tsc's (npm test passes; the keys: unit tests)
    assert ended(events)["verification"] == "passed"
