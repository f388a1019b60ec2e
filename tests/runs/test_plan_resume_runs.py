"""`cerveau report --json` and `cerveau run --json` after `--resume last` agree on every step
(issue 22's acceptance): the run's `plan_report` is the session's plan ledger, restored with
its writes, and so is the report."""

from __future__ import annotations

import json
import subprocess
import sys

from cerveau_tui.testing.scripted_server import ScriptedServer

PLAN = [
    {"id": "s1", "title": "Write the greeting module", "files": ["greet.py"]},
    {"id": "s2", "title": "Write its test", "files": ["test_greet.py"]},
]
FIRST = {
    "responses": [
        {"tool_calls": [{"name": "commit_plan", "arguments": {"steps": PLAN}}]},
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "greet.py", "content": "hi = 1\n"}}
            ]
        },
        {"content": "the module is written"},
    ]
}


def report_steps(ws) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "report", "--workspace", str(ws), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return {s["id"]: s["status"] for s in json.loads(out.stdout)["steps"]}


def test_run_json_after_resume_last_and_report_json_agree_on_every_step(cli, tmp_path):
    with ScriptedServer(FIRST) as srv:
        code, _, err = cli(tmp_path, srv.url, "greeting module with a test")
    assert code == 0, err
    with ScriptedServer({"responses": [{"content": "going on"}]}) as srv:
        code, events, err = cli(tmp_path, srv.url, "go on", "--resume", "last")
        told = json.dumps(srv.requests[0]["messages"])
    assert code == 0, err
    reports = [e["payload"] for e in events if e["type"] == "plan_report"]
    assert reports, "the resumed run sends the plan's report"
    run = {s["id"]: s["status"] for s in reports[-1]["steps"]}
    assert run == report_steps(tmp_path) == {"s1": "done_unconfirmed", "s2": "pending"}
    assert "[x?] s1. Write the greeting module" in told  # and the model was told the same
