"""The resume brief (context/brief.py) and the facts it is built from: empty sections say so, the
plan's statuses are the reconciled ones (files on disk), and the plan guidance at the start of a
turn uses the same reconciled report."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.bus import Emitter
from cerveau_tui.config import Settings
from cerveau_tui.context.brief import NONE, BriefFacts, build_resume_brief
from cerveau_tui.history import CallRef, History, Message
from cerveau_tui.hooks import BriefLine, BriefSection, Hook, TurnContext
from cerveau_tui.loop.model_call import denied_calls, resume_brief
from cerveau_tui.loop.state import EngineState
from cerveau_tui.plan.hook import PlanHook
from cerveau_tui.protocol import EventType
from cerveau_tui.tools.base import ToolState

SECTIONS = (
    "The person's request, verbatim:",
    "Plan (each step's status checked against the files on disk):",
    "Decisions:",
    "What already failed (do not repeat it blindly):",
    "Done criteria still unmet:",
    "Files written this session:",
)


def section(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(title) + 1
    out = []
    for line in lines[start:]:
        if not line:
            break
        out.append(line)
    return out


def test_with_nothing_known_every_section_says_none():
    text = build_resume_brief(BriefFacts())
    for title in SECTIONS:
        assert section(text, title) == [NONE], title


def test_the_request_is_carried_verbatim_however_long():
    request = "Refactor the parser.\n\nKeep   the API;  " + "detail " * 400
    text = build_resume_brief(BriefFacts(request=request))
    assert request in text


def test_known_facts_fill_their_sections():
    facts = BriefFacts(
        request="build it",
        plan=["1. Parser [p.py]: done_unconfirmed"],
        decisions=["step 1: kept the old API"],
        failed=["bash pytest: exit 1"],
        unmet=["tests"],
        written=["p.py", "q.py"],
    )
    text = build_resume_brief(facts)
    assert section(text, SECTIONS[1]) == ["1. Parser [p.py]: done_unconfirmed"]
    assert section(text, SECTIONS[2]) == ["- step 1: kept the old API"]
    assert section(text, SECTIONS[3]) == ["- bash pytest: exit 1"]
    assert section(text, SECTIONS[4]) == ["- tests"]
    assert section(text, SECTIONS[5]) == ["p.py, q.py"]


# --- the facts, from the session -----------------------------------------------------------------


def plan_session(ws: Path) -> tuple[Emitter, PlanHook, TurnContext]:
    bus = Emitter("s")
    hook = PlanHook(ws)
    ctx = TurnContext("t1", 1, ws, bus, ToolState(), History(), Settings(workspace=ws))
    hook.on_turn_start(ctx, "start")  # subscribes the hook to the bus
    bus.emit(
        EventType.PLAN_COMMITTED,
        {
            "source": "tool",
            "steps": [
                {"id": "1", "title": "Parser", "files": ["p.py"]},
                {"id": "2", "title": "Tests", "files": ["t.py"]},
            ],
        },
    )
    (ws / "p.py").write_text("def parse(): ...\n")
    bus.emit(
        EventType.TOOL_RESULT,
        {"call_id": "c1", "name": "write_file", "ok": True, "output": "ok", "wrote": ["p.py"]},
    )
    return bus, hook, ctx


def test_a_step_whose_files_are_on_disk_is_briefed_as_done_unconfirmed(tmp_path: Path):
    _, hook, _ = plan_session(tmp_path)
    state = EngineState(task="build the parser")
    text = resume_brief(0, state=state, workspace=tmp_path, hooks=[hook])
    plan = section(text, SECTIONS[1])
    assert plan == ["1. Parser [p.py]: done_unconfirmed", "2. Tests [t.py]: pending"]


def test_the_plan_guidance_at_turn_start_uses_the_reconciled_report(tmp_path: Path):
    """The event-only report told the model "[ ] 1. Parser" for a step whose file was on disk."""
    bus, hook, _ = plan_session(tmp_path)
    history = History()
    ctx = TurnContext("t2", 1, tmp_path, bus, ToolState(), history, Settings(workspace=tmp_path))
    hook.on_turn_start(ctx, "go on")
    told = history[-1]["content"]
    assert "[x?] 1. Parser [p.py]" in told and "[ ] 2. Tests [t.py]" in told


def test_a_steps_note_is_briefed_as_a_decision(tmp_path: Path):
    bus, hook, _ = plan_session(tmp_path)
    bus.emit(
        EventType.PLAN_UPDATED,
        {"step_id": "2", "status": "in_progress", "note": "pytest, not unittest"},
    )
    text = resume_brief(0, state=EngineState(), workspace=tmp_path, hooks=[hook])
    assert section(text, SECTIONS[2]) == ["- step 2: pytest, not unittest"]


class _Unmet(Hook):
    name = "seal"

    def resume_brief(self) -> list[BriefLine]:
        return [BriefLine(BriefSection.UNMET, "tests"), BriefLine(BriefSection.UNMET, "lint")]


class _Breaker(Hook):
    name = "breaker"

    def resume_brief(self) -> list[BriefLine]:
        return [BriefLine(BriefSection.FAILED, "`pytest` not found (3 times)")]


class _Broken(Hook):
    name = "broken"

    def resume_brief(self) -> list[BriefLine]:
        raise RuntimeError("boom")


def test_unmet_criteria_failures_and_writes_come_from_the_session(tmp_path: Path):
    state = EngineState(task="t")
    state.note_failure("bash pytest: exit 1")
    state.tools.written.append(tmp_path / "a.py")
    hooks = [_Unmet(), _Breaker(), _Broken()]
    text = resume_brief(0, state=state, workspace=tmp_path, hooks=hooks)
    assert section(text, SECTIONS[4]) == ["- tests", "- lint"]
    failed = section(text, SECTIONS[3])
    assert failed == ["- bash pytest: exit 1", "- `pytest` not found (3 times)"]
    assert section(text, SECTIONS[5]) == ["a.py"]


def test_a_denied_call_is_named_with_what_it_tried():
    history = History()
    history.append(Message.reply("", [CallRef("c1", "bash", '{"command": "rm -rf build"}')]))
    history.append(Message.result("c1", "the person denied this call", "denied"))
    (line,) = denied_calls(history.messages)
    assert line.startswith("bash ") and "rm -rf build" in line and "denied" in line


def test_a_denied_call_is_found_by_its_status_whatever_its_result_says():
    """The brief matched the dispatcher's sentence: a hook's refusal (status denied, its own
    words) was missed, and a result that merely began with "denied" was briefed as one."""
    history = History()
    history.append(Message.reply("", [CallRef("c1", "bash", '{"command": "make"}')]))
    history.append(Message.result("c1", "refused: the plan says read first", "denied"))
    history.append(Message.reply("", [CallRef("c2", "read_file", '{"path": "d"}')]))
    history.append(Message.result("c2", "denied.txt: 3 lines", "done"))
    (line,) = denied_calls(history.messages)
    assert line.startswith("bash ") and "make" in line and "refused" in line


def test_a_hook_line_is_filed_by_its_section_not_its_wording(tmp_path: Path):
    """A note whose text starts like another section's title stays a note."""

    class _Worded(Hook):
        name = "worded"

        def resume_brief(self) -> list[BriefLine]:
            return [BriefLine(BriefSection.NOTE, "Failed: nothing, this is a note")]

    text = resume_brief(0, state=EngineState(), workspace=tmp_path, hooks=[_Worded()])
    assert section(text, SECTIONS[3]) == [NONE]
    assert "- Failed: nothing, this is a note" in text.split("Other notes:")[1]


def test_the_plan_hook_keeps_no_writes_diff_or_output(tmp_path: Path):
    """It keeps every write of the session for the reconciled report: a write_file's diff is the
    whole file, and a long session's writes stayed in memory to its end."""
    bus, hook, _ = plan_session(tmp_path)
    big = "+x\n" * 100_000
    bus.emit(
        EventType.TOOL_RESULT,
        {"call_id": "c2", "name": "write_file", "ok": True, "output": big, "diff": big,
         "wrote": ["t.py"]},
    )  # fmt: skip
    kept = [e.payload for e in hook.state.report_events() if e.type == EventType.TOOL_RESULT]
    assert kept == [{"ok": True, "wrote": ["p.py"]}, {"ok": True, "wrote": ["t.py"]}]
