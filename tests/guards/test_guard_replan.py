"""A plan revised with nothing changed since the revision before is a no-progress round that
ends the streak early (issue 37: a question got `commit_plan` r1-r4 with no file read or written,
and four rounds never reached the stall limit of eight). Through the CLI on the scripted server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.loop.guards.progress import WorkTracker
from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer


def plan(*titles: str) -> dict[str, Any]:
    steps = [{"title": t, "files": ["calc.py"]} for t in titles]
    return {"tool_calls": [{"name": "commit_plan", "arguments": {"steps": steps}}]}


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def _events(tmp_path: Path, script: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    with ScriptedServer([*script, {"content": "It subtracts."}]) as srv:
        _, events, err = run_cli(ws, srv.url, "what does calc.py do?")
    assert events, err[-2000:]
    return events


def _ended(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e["payload"] for e in events if e["type"] == "turn_ended")


def test_the_second_revision_in_a_row_with_nothing_changed_stops_the_turn(tmp_path) -> None:
    events = _events(tmp_path, [plan("read"), plan("read", "explain"), plan("explain")])
    ended = _ended(events)
    assert ended["reason"] == "stalled" and ended["iterations"] == 3
    assert "plan was revised 2 times in a row" in ended["message"]
    [trip] = [e["payload"] for e in events if e["type"] == "guard_tripped"]
    assert trip["guard"] == "stall" and trip["iteration"] == 3


def test_revisions_with_a_change_between_them_run_on(tmp_path) -> None:
    script = [plan("fix"), write("calc.py", "x = 1\n"), plan("fix", "check")]
    script += [write("calc.py", "x = 2\n"), plan("check")]
    ended = _ended(_events(tmp_path, script))
    assert ended["reason"] == "completed"


def test_a_plan_from_an_earlier_turn_is_not_the_revision_before() -> None:
    t = WorkTracker(lambda: "same", limit=8)
    t.reset()
    assert t.observe(1, ["commit_plan"], revised=True) is None
    assert t.observe(2, ["commit_plan"], revised=True) is None
    t.reset()  # the person's next turn ("change step 2")
    assert t.observe(1, ["commit_plan"], revised=True) is None
    assert t.observe(2, ["commit_plan"], revised=True) is None
    assert t.observe(3, ["commit_plan"], revised=True) is not None
