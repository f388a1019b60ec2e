"""PlanHook scenarios: a plan followed, a plan written to PLAN.md, drift, discussion then autopilot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import Settings
from cerveau_tui.history import History
from cerveau_tui.hooks import CallRecord, TurnContext
from cerveau_tui.plan.hook import PlanHook
from cerveau_tui.plan.models import StepStatus
from cerveau_tui.plan.report import build_report_at
from cerveau_tui.tools.base import ToolContext, ToolState
from cerveau_tui.tools.files import WriteFile
from cerveau_tui.tools.plan_tools import CommitPlan, UpdatePlan

PLAN_MD = "# Plan\n\n1. Parser in `src/parser.py`\n2. Tests in `tests/test_parser.py`\n"


class Turn:
    """One session: a real bus, the hook, real tools writing into a real workspace."""

    def __init__(self, ws: Path) -> None:
        self.ws = ws
        self.bus = Emitter("s")
        self.rec = Recorder(self.bus)
        self.hook = PlanHook(ws)
        self.tools = ToolContext(
            workspace=ws, state=ToolState(), bus=self.bus, plan=self.hook.state
        )
        self.history = History()
        self.ctx = TurnContext(
            "t1", 1, ws, self.bus, self.tools.state, self.history, Settings(workspace=ws)
        )

    def start(self, task: str = "do it") -> None:
        self.hook.on_turn_start(self.ctx, task)

    def call(self, tool: Any, args: dict[str, Any]) -> str:
        result = tool.run(tool.Args.model_validate(args), self.tools)
        wrote = [str(p.relative_to(self.ws.resolve())) for p in result.wrote]
        record = CallRecord(1, "c", tool.name, args, result.ok, result.output, wrote=wrote)
        shown = self.hook.on_tool_result(self.ctx, record)
        return shown if shown is not None else result.output

    def write(self, path: str, content: str) -> str:
        return self.call(WriteFile(), {"path": path, "content": content})


@pytest.fixture
def turn(tmp_path: Path) -> Turn:
    t = Turn(tmp_path)
    t.start()
    return t


def test_a_plan_committed_then_followed_reports_done(turn: Turn) -> None:
    turn.call(CommitPlan(), {"steps": [{"id": "1", "title": "p", "files": ["src/p.py"]}]})
    turn.call(UpdatePlan(), {"step_id": "1", "status": "in_progress"})
    turn.write("src/p.py", "x = 1\n")
    turn.call(UpdatePlan(), {"step_id": "1", "status": "done"})
    report = build_report_at(turn.rec.events, turn.ws)
    assert [str(s.status) for s in report.steps] == ["done"]
    assert turn.rec.of("drift") == []


def test_a_plan_written_to_plan_md_is_committed_and_disclosed(turn: Turn) -> None:
    shown = turn.write("PLAN.md", PLAN_MD)
    assert (turn.ws / "PLAN.md").read_text() == PLAN_MD  # the file is still written
    [ev] = turn.rec.of("plan_committed")
    assert ev.payload["source"] == "file" and ev.payload["path"] == "PLAN.md"
    assert [s["files"] for s in ev.payload["steps"]] == [
        ["src/parser.py"],
        ["tests/test_parser.py"],
    ]
    [notice] = turn.rec.of("notice")
    assert "PLAN.md looks like a plan" in notice.payload["text"]
    assert "[plan]" in shown and "update_plan" in shown


def test_update_plan_finds_a_plan_that_came_from_a_file(turn: Turn) -> None:
    turn.write("PLAN.md", PLAN_MD)
    turn.write("src/parser.py", "p")
    out = turn.call(UpdatePlan(), {"step_id": "1", "status": "done"})
    assert out.startswith("step 1 done")
    assert build_report_at(turn.rec.events, turn.ws).steps[0].status == StepStatus.DONE


def test_rewriting_the_same_plan_file_does_not_recommit(turn: Turn) -> None:
    turn.write("PLAN.md", PLAN_MD)
    turn.write("PLAN.md", PLAN_MD + "\nNotes: none.\n")
    assert len(turn.rec.of("plan_committed")) == 1


def test_a_readme_with_numbered_steps_is_not_a_plan(turn: Turn) -> None:
    turn.write("README.md", "# Install\n1. pip install x\n2. run x\n")
    assert turn.rec.of("plan_committed") == []


def test_a_write_outside_the_declared_files_is_flagged_not_blocked(turn: Turn) -> None:
    turn.call(CommitPlan(), {"steps": [{"id": "1", "title": "parser", "files": ["src/p.py"]}]})
    shown = turn.write("src/other.py", "o")
    assert (turn.ws / "src" / "other.py").read_text() == "o"
    [drift] = turn.rec.of("drift")
    assert drift.payload["path"] == "src/other.py" and drift.payload["step_id"] == "1"
    assert "step 1 (parser)" in drift.payload["message"]
    assert "outside the plan" in shown


def test_drift_is_flagged_once_per_file_per_plan(turn: Turn) -> None:
    turn.call(CommitPlan(), {"steps": [{"id": "1", "title": "parser", "files": ["src/p.py"]}]})
    turn.write("x.py", "1")
    turn.write("x.py", "2")
    assert len(turn.rec.of("drift")) == 1


def test_a_discussion_plan_is_told_as_guidance_at_the_next_turn(tmp_path: Path) -> None:
    t = Turn(tmp_path)
    t.start("let's plan")  # discussion turn: no plan yet, nothing told
    assert t.history == []
    t.call(
        CommitPlan(),
        {
            "steps": [
                {"id": "1", "title": "parser", "files": ["src/p.py"]},
                {"id": "2", "title": "cli"},
            ]
        },
    )
    t.start("go")  # autopilot turn
    [told] = t.history
    assert told["role"] == "user"
    assert "Plan (guidance, adapt as needed" in told["content"]
    assert "1. parser [src/p.py]" in told["content"] and "2. cli" in told["content"]


def test_a_finished_plan_is_not_told_again(tmp_path: Path) -> None:
    t = Turn(tmp_path)
    t.start()
    t.call(CommitPlan(), {"steps": [{"id": "1", "title": "p"}]})
    t.call(UpdatePlan(), {"step_id": "1", "status": "done"})
    t.start()
    assert t.history == []


def test_system_sections_stay_empty_so_the_prefix_never_changes(turn: Turn) -> None:
    turn.call(CommitPlan(), {"steps": [{"id": "1", "title": "p"}]})
    assert turn.hook.system_sections() == []


def test_a_markdown_copy_of_a_committed_plan_does_not_replace_it(turn: Turn) -> None:
    turn.call(CommitPlan(), {"steps": [{"id": "a", "title": "parser", "files": ["src/parser.py"]}]})
    turn.write("PLAN.md", PLAN_MD)
    assert [e.payload["source"] for e in turn.rec.of("plan_committed")] == ["tool"]
    assert turn.rec.of("drift") == []
