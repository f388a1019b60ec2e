"""After a resume every plan view says the same of every step (issue 22, "one plan ledger").

Before, the resume replayed the plan's events but not the session's writes into the state the
model is served from: for a step whose file was written (no completion event), the model's
guidance and the resume brief said `pending` while the strip and `cerveau report` said
`done_unconfirmed`, and `Session.report()` was empty. Each view here is read from the outside:
the guidance from the request the scripted server received, the brief's text, the `plan_report`
event the UI is sent, `cerveau report --json`'s output."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cerveau_tui.loop.model_call import resume_brief
from cerveau_tui.plan.report_cli import report_command
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import open_session, write

PLAN = [
    {"id": "1", "title": "Write the parser", "files": ["parser.py"]},
    {"id": "2", "title": "Write the cli", "files": ["cli.py"]},
]
FIRST = {
    "responses": [
        {"tool_calls": [{"name": "commit_plan", "arguments": {"steps": PLAN}}]},
        write("parser.py", "def parse(s):\n    return s.split()\n"),
        {"content": "the parser is written; the cli next time"},
    ]
}
#: The guidance's marks (plan/hook.py) read back as statuses.
MARKS = {" ": "pending", "~": "in_progress", "x": "done", "x?": "done_unconfirmed"}
EXPECTED = {"1": "done_unconfirmed", "2": "pending"}


def _guidance(request: dict) -> dict[str, str]:
    text = next(
        str(m["content"])
        for m in request["messages"]
        if m["role"] == "user" and "Plan (guidance" in str(m.get("content"))
    )
    return {
        sid: MARKS[mark]
        for mark, sid in re.findall(r"^\[(x\?|x\*|x|~| |!)\] (\S+)\. ", text, re.MULTILINE)
    }


def _brief(text: str) -> dict[str, str]:
    return dict(re.findall(r"(?m)^\W*(\d+)\. Write the \w+ \[[^]]+\]: (\w+)\s*$", text))


def test_after_a_resume_every_plan_view_agrees_on_every_step(tmp_path: Path) -> None:
    with ScriptedServer(FIRST) as srv:
        s, _ = open_session(tmp_path, srv.url)
        try:
            s.engine.run("write the parser and the cli")
        finally:
            s.close()
    assert (tmp_path / "parser.py").exists()

    with ScriptedServer({"responses": [{"content": "going on"}]}) as srv:
        s, rec = open_session(tmp_path, srv.url, resume="last")
        try:
            s.engine.run("go on")
            guidance = _guidance(srv.requests[0])
            brief = _brief(
                resume_brief(0, state=s.engine.loop_state, workspace=tmp_path, hooks=s.engine.hooks)
            )
            ui = {st["id"]: st["status"] for st in rec.of("plan_report")[-1].payload["steps"]}
            session = {st.id: str(st.status) for st in s.report().steps}
        finally:
            s.close()
    code, out = report_command(tmp_path, None, as_json=True)
    assert code == 0
    report = {st["id"]: st["status"] for st in json.loads(out)["steps"]}

    views = {
        "guidance": guidance,
        "brief": brief,
        "ui": ui,
        "session": session,
        "report": report,
    }
    assert views == {name: EXPECTED for name in views}


def test_an_undo_between_turns_sends_the_views_the_report_it_made(tmp_path: Path) -> None:
    """No turn follows an undo (a rewind of the last turn's code), so the rewinder itself
    publishes: the strip kept "1/2 done" for a step whose checkpointed file the undo had just
    removed."""
    script = {
        "responses": [
            FIRST["responses"][0],
            FIRST["responses"][1],
            {
                "tool_calls": [
                    {"name": "update_plan", "arguments": {"step_id": "1", "status": "done"}}
                ]
            },
            {"content": "the parser is done"},
        ]
    }
    with ScriptedServer(script) as srv:
        s, rec = open_session(tmp_path, srv.url)
        try:
            s.engine.run("write the parser")
            before = rec.of("plan_report")[-1].payload
            s.rewinder.rewind_last_turn()
            after = rec.of("plan_report")[-1].payload
            session = [str(st.status) for st in s.report().steps]
        finally:
            s.close()
    assert not (tmp_path / "parser.py").exists()
    assert [st["status"] for st in before["steps"]] == ["done", "pending"]
    assert [st["status"] for st in after["steps"]] == session == ["missing", "pending"]
