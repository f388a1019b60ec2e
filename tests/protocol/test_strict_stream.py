"""The `--json` stream of a long scripted session, validated event by event against the closed
protocol: every event's type is in EVENT_MODELS, its payload fits the model with extra="forbid",
it is exactly what the model dumps, and it carries its `ts` float. Real CLI, real pytest, the
scripted server: a plan, reads, a refused crossing, a drift, a repeat; then the done gate's
ladder to a park; then a resumed session that fixes the code, checkpoints the step and ends passed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cerveau_tui.protocol import EVENT_MODELS, EventType
from cerveau_tui.testing.scripted_server import ScriptedServer

GATE = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"
CALC_BROKEN = "def add(a, b):\n    return a - b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"

#: What the scenario must at least have said, so the test cannot pass on a short stream.
EXPECTED = {
    "session_started", "session_resumed", "turn_started", "iteration_started",
    "assistant_message", "tool_call", "tool_started", "tool_result", "approval_resolved",
    "usage", "notice", "plan_committed", "plan_updated", "checkpoint", "drift", "check",
    "escalation", "parked", "verification", "turn_ended",
}  # fmt: skip


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def run(ws: Path, url: str, task: str, *extra: str) -> list[dict[str, Any]]:
    env = {**os.environ, "CERVEAU_CONFIG": str(ws.parent / "no-user-config.toml")}
    cmd = [sys.executable, "-m", "cerveau_tui", "run", "--json", "--workspace", str(ws)]
    cmd += ["--server", url, "--trust-workspace-config", *extra, task]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert events, proc.stderr[-2000:]
    return events


def project(ws: Path) -> Path:
    files = {"calc.py": CALC_BROKEN, "tests/__init__.py": "", "tests/test_calc.py": TEST_CALC}
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "config.toml").write_text(
        f'[done]\nprotected = ["tests/**"]\n[[done.criteria]]\nname = "tests"\ncommand = "{GATE}"\n'
    )
    return ws


def strictly(event: dict[str, Any]) -> None:
    model = EVENT_MODELS[EventType(event["type"])]
    assert isinstance(event["ts"], float), event
    parsed = model.model_validate(event["payload"])  # extra="forbid": an unknown key raises
    assert parsed.wire() == event["payload"], (event["type"], event["payload"])


def test_every_event_of_a_long_session_fits_the_closed_protocol(tmp_path: Path) -> None:
    ws = project(tmp_path / "ws")
    outside = tmp_path / "outside.txt"
    first = [
        call("commit_plan", steps=[{"id": "1", "title": "fix add", "files": ["calc.py"]}]),
        call("update_plan", step_id="1", status="in_progress"),
        call("read_file", path="calc.py"),
        call("write_file", path=str(outside), content="x"),
        call("write_file", path="notes.txt", content="a note\n"),
        call("bash", command="cat calc.py"),
        call("bash", command="cat calc.py"),
        call("bash", command="cat calc.py"),  # the repeat guard ends this turn
    ]
    with ScriptedServer(first) as srv:
        events = run(ws, srv.url, "make the tests pass")
    # The gate's ladder: 2 stalls per rung, R1..R3, then park.
    stalls = [{"content": f"I believe it is done ({i})."} for i in range(8)]
    with ScriptedServer(stalls) as srv:
        events += run(ws, srv.url, "make the tests pass", "--resume", "last")
    second = [
        call("edit_file", path="calc.py", old="a - b", new="a + b"),
        call("update_plan", step_id="1", status="done"),
        {"content": "Fixed."},
        {"content": "Fixed."},
    ]
    with ScriptedServer(second) as srv:
        events += run(ws, srv.url, "continue", "--resume", "last")
    for event in events:
        strictly(event)
    seen = {e["type"] for e in events}
    assert EXPECTED <= seen, sorted(EXPECTED - seen)
    assert not outside.exists()
