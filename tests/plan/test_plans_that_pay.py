"""Plans that pay (issue 37): no "plan first" pressure for a question, and `update_plan` before any
plan is a refusal that names the way on. The tool list stays the same in every request: the tools
render into the server's cached prefix (issue 36), so `update_plan` is offered from the start.
Through the CLI on the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _run(tmp_path: Path, script: list[dict[str, Any]], task: str):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    with ScriptedServer(script) as srv:
        code, events, err = run_cli(ws, srv.url, task)
        assert code == 0, err[-2000:]
        return events, list(srv.requests)


def test_a_question_meets_no_plan_pressure_in_the_prompt(tmp_path: Path) -> None:
    _, requests = _run(tmp_path, [{"content": "It subtracts."}], "what does calc.py do?")
    said = [str(m["content"]) for m in requests[0]["messages"]]
    assert not any("plan" in text.lower() for text in said)
    [plan] = [t["function"] for t in requests[0]["tools"] if t["function"]["name"] == "commit_plan"]
    assert "a question needs none" in plan["description"]


def test_update_plan_before_a_plan_is_refused_naming_commit_plan_and_costs_no_strike(
    tmp_path: Path,
) -> None:
    steps = [{"title": "fix add", "files": ["calc.py"]}]
    script = [call("update_plan", step_id="1", status="in_progress")]
    script += [call("commit_plan", steps=steps), call("update_plan", step_id="1", status="done")]
    events, requests = _run(tmp_path, [*script, {"content": "Planned."}], "plan the fix")
    results = [e["payload"] for e in events if e["type"] == "tool_result"]
    assert not results[0]["ok"] and "call commit_plan first" in results[0]["output"]
    assert [r["ok"] for r in results[1:]] == [True, True]
    assert [e for e in events if e["type"] == "guard_tripped"] == []
    assert next(e for e in events if e["type"] == "turn_ended")["payload"]["reason"] == "completed"
    assert len({json.dumps(r["tools"], sort_keys=True) for r in requests}) == 1
