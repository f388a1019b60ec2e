"""Issue 6 scenarios through `cerveau run --json` on the scripted server."""

from __future__ import annotations

import json
import subprocess
import sys

from cerveau_tui.testing.scripted_server import ScriptedServer

PLAN = [
    {"id": "s1", "title": "Write the greeting module", "files": ["greet.py"]},
    {"id": "s2", "title": "Write its test", "files": ["test_greet.py"]},
]


def of(events, type_):
    return [e["payload"] for e in events if e["type"] == type_]


def report(ws):
    out = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "report", "--workspace", str(ws), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_committed_plan_is_followed_and_checkpointed(cli, tmp_path):
    script = {
        "responses": [
            {"tool_calls": [{"name": "commit_plan", "arguments": {"steps": PLAN}}]},
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {
                            "path": "greet.py",
                            "content": "def hi():\n    return 'hi'\n",
                        },
                    }
                ]
            },
            {
                "tool_calls": [
                    {"name": "update_plan", "arguments": {"step_id": "s1", "status": "done"}}
                ]
            },
            {"content": "step one done"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "greeting module with a test")
    assert code == 0
    assert of(events, "plan_committed")[0]["source"] == "tool"
    assert "greet.py" in of(events, "checkpoint")[0]["hashes"]
    steps = {s["id"]: s["status"] for s in report(tmp_path)["steps"]}
    assert steps == {"s1": "done", "s2": "pending"}


def test_a_plan_written_to_a_markdown_file_is_committed_and_disclosed(cli, tmp_path):
    md = "# Plan\n\n1. Write `greet.py` with hi()\n2. Write `test_greet.py`\n"
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "PLAN.md", "content": md}}
                ]
            },
            {"content": "planned"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "plan it")
    assert (tmp_path / "PLAN.md").read_text() == md  # the file is still written
    committed = of(events, "plan_committed")
    assert committed and committed[0]["source"] == "file" and len(committed[0]["steps"]) == 2
    assert any("PLAN.md" in n.get("text", "") for n in of(events, "notice"))


def test_a_write_outside_the_declared_files_is_flagged_not_blocked(cli, tmp_path):
    script = {
        "responses": [
            {"tool_calls": [{"name": "commit_plan", "arguments": {"steps": PLAN}}]},
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "surprise.py", "content": "x = 1\n"},
                    }
                ]
            },
            {"content": "done"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "x")
    assert (tmp_path / "surprise.py").exists()
    drift = of(events, "drift")
    assert drift and drift[0]["path"] == "surprise.py" and drift[0]["step_id"] == "s1"


def test_a_discussion_plan_guides_the_next_autopilot_run(cli, tmp_path):
    discuss = {
        "responses": [
            {"tool_calls": [{"name": "commit_plan", "arguments": {"steps": PLAN}}]},
            {"content": "here is the plan"},
        ]
    }
    with ScriptedServer(discuss) as srv:
        code, events, _ = cli(tmp_path, srv.url, "let's plan", "--discuss")
        offered = {t["function"]["name"] for t in srv.requests[0]["tools"]}
    # Every tool is sent (the prompt's prefix stays, issue 36); the others are refused.
    assert code == 0 and {"read_file", "list_files", "search", "commit_plan"} <= offered
    autopilot = {
        "responses": [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {
                            "path": "greet.py",
                            "content": "def hi():\n    return 'hi'\n",
                        },
                    }
                ]
            },
            {"content": "done"},
        ]
    }
    with ScriptedServer(autopilot) as srv:
        code, events, _ = cli(tmp_path, srv.url, "go ahead", "--continue")
        first = json.dumps(srv.requests[0]["messages"])
    assert code == 0
    assert "Write the greeting module" in first and "guidance" in first.lower()
    assert not of(events, "drift")  # greet.py is a declared file of the carried plan
    steps = {s["id"]: s["status"] for s in report(tmp_path)["steps"]}
    assert steps["s1"] in ("done_unconfirmed", "in_progress")
