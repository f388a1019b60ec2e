"""The done hooks (SealHook, then GateHook when there are criteria) at their hook points, with a
real TurnContext and real criterion runs in tmp_path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cerveau_tui.adapters.registry import AdapterRegistry
from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import Settings
from cerveau_tui.done.criteria import Criterion, DoneSet
from cerveau_tui.done.hook import GateHook
from cerveau_tui.done.sandboxed import run_in_sandbox
from cerveau_tui.done.seal import SealHook
from cerveau_tui.history import History
from cerveau_tui.hooks import CallRecord, Hook, Reenter, Stop, TurnContext
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.none import NoSandbox
from cerveau_tui.tools.base import ToolState

from .conftest import CALC_BROKEN, CALC_FIXED, GATE, TEST_CALC

TESTS = DoneSet((Criterion("tests", GATE),), ("tests/**",))


class DoneHooks:
    """The seal and (with criteria) the gate, called as the engine calls its hooks: in order, the
    first verdict wins, the turn_ended fields merged."""

    def __init__(self, gate: GateHook) -> None:
        self.gate = gate
        seal = SealHook(gate.done, state=gate.seal)
        self.hooks: list[Hook] = [seal, gate] if gate.done.criteria else [seal]

    def system_sections(self) -> list[str]:
        return [s for h in self.hooks for s in h.system_sections()]

    def on_turn_start(self, ctx: TurnContext, task: str) -> Stop | None:
        return next((v for h in self.hooks if (v := h.on_turn_start(ctx, task))), None)

    def on_tool_result(self, ctx: TurnContext, record: CallRecord) -> str | None:
        shown = [r for h in self.hooks if (r := h.on_tool_result(ctx, record)) is not None]
        return shown[-1] if shown else None

    def on_answer(self, ctx: TurnContext, content: str) -> Stop | Reenter | None:
        return next((v for h in self.hooks if (v := h.on_answer(ctx, content))), None)

    def on_turn_end(self, ctx: TurnContext, reason: str) -> dict:
        return {k: v for h in self.hooks for k, v in h.on_turn_end(ctx, reason).items()}


def setup(ws: Path, done: DoneSet = TESTS, **kw) -> tuple[DoneHooks, TurnContext, Recorder]:
    (ws / "tests").mkdir(exist_ok=True)
    (ws / "tests" / "__init__.py").write_text("")
    (ws / "calc.py").write_text(CALC_BROKEN)
    (ws / "tests" / "test_calc.py").write_text(TEST_CALC)
    bus = Emitter()
    rec = Recorder(bus)
    state = ToolState()
    hook = DoneHooks(
        GateHook(done, run=run_in_sandbox(NoSandbox(), ws), adapters=AdapterRegistry(), **kw)
    )
    ctx = TurnContext("t1", 0, ws, bus, state, History(), Settings(workspace=ws))
    return hook, ctx, rec


def write(ctx: TurnContext, rel: str, text: str) -> CallRecord:
    (ctx.workspace / rel).write_text(text)
    ctx.state.record_write(ctx.workspace / rel)
    return CallRecord(1, "c1", "write_file", {"path": rel}, True, "ok", wrote=[rel])


def test_a_write_after_a_passing_check_makes_the_seal_stale(tmp_path: Path) -> None:
    hook, ctx, _ = setup(tmp_path)
    hook.on_turn_start(ctx, "fix")
    write(ctx, "calc.py", CALC_FIXED)
    assert hook.on_answer(ctx, "done") is None
    assert hook.on_turn_end(ctx, "completed")["verification"] == "passed"
    write(ctx, "calc.py", CALC_FIXED + "\n")  # same bytes set, one more write: the count moves
    assert hook.on_turn_end(ctx, "interrupted")["verification"] == "stale"


def test_a_turn_that_changes_nothing_is_clean(tmp_path: Path) -> None:
    hook, ctx, _ = setup(tmp_path, max_stall_cycles=1, escalation=False)
    hook.on_turn_start(ctx, "explain")
    assert isinstance(hook.on_answer(ctx, "it adds"), Stop)
    assert hook.on_turn_end(ctx, "incomplete") == {
        "verification": "clean",
        "unmet": ["tests"],
        "touched_protected": [],
    }


def test_the_red_precheck_says_so_when_the_gate_already_passes(tmp_path: Path) -> None:
    hook, ctx, rec = setup(tmp_path)
    (tmp_path / "calc.py").write_text(CALC_FIXED)
    assert hook.on_turn_start(ctx, "fix") is None
    assert rec.of("check")[0].payload["precheck"] is True
    assert any("already passes" in e.payload["text"] for e in rec.of("notice"))


def test_criteria_that_cannot_run_accept_the_answer(tmp_path: Path) -> None:
    hook, ctx, rec = setup(tmp_path, DoneSet((Criterion("docs", ""),)))
    hook.on_turn_start(ctx, "fix")
    write(ctx, "calc.py", CALC_FIXED)
    assert hook.on_answer(ctx, "done") is None
    assert hook.on_turn_end(ctx, "completed")["verification"] == "unavailable"


def test_without_criteria_the_gate_stays_out_of_the_way(tmp_path: Path) -> None:
    hook, ctx, rec = setup(tmp_path, DoneSet())
    hook.on_turn_start(ctx, "fix")
    write(ctx, "calc.py", CALC_FIXED)
    assert hook.on_answer(ctx, "done") is None
    assert not rec.of("check")
    assert hook.system_sections() == []
    assert hook.on_turn_end(ctx, "completed")["verification"] == "unavailable"


def test_a_protected_write_is_reported_once_per_path_and_never_refused(tmp_path: Path) -> None:
    hook, ctx, rec = setup(tmp_path)
    hook.on_turn_start(ctx, "fix")
    for _ in range(2):
        assert hook.on_tool_result(ctx, write(ctx, "tests/test_calc.py", TEST_CALC)) is None
    assert [e.payload["paths"] for e in rec.of("touched_protected")] == [["tests/test_calc.py"]]


def test_autofix_runs_before_the_check_on_the_files_written(tmp_path: Path) -> None:
    bindir = str(Path(sys.executable).parent)
    sandbox = NoSandbox()

    def run(command: str, timeout: float) -> tuple[int | None, str]:
        env = {"PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
        r = sandbox.run(CommandSpec(command, workspace=tmp_path, timeout=timeout, env=env))
        return r.exit_code, r.output

    hook, ctx, rec = setup(tmp_path)
    hook.gate.run = run
    hook.on_turn_start(ctx, "fix")
    write(ctx, "calc.py", "import os\ndef add(a,b):\n    return a+b\n")
    assert hook.on_answer(ctx, "done") is None
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert any(e.payload["text"].startswith("autofix: ruff") for e in rec.of("notice"))


def test_r4_asks_the_expert_and_passes_its_advice_on(tmp_path: Path) -> None:
    asked: list[str] = []

    def expert(situation: str) -> str:
        asked.append(situation)
        return "return a + b in calc.add"

    hook, ctx, rec = setup(tmp_path, max_stall_cycles=1, expert=expert)
    hook.on_turn_start(ctx, "fix add")
    verdicts = [hook.on_answer(ctx, "done") for _ in range(5)]
    assert [e.payload["rung"] for e in rec.of("escalation")] == ["R1", "R2", "R3", "R4"]
    r4 = verdicts[3]
    assert isinstance(r4, Reenter) and "return a + b in calc.add" in r4.message
    assert asked and "## What is unmet\n- tests" in asked[0]
    assert isinstance(verdicts[4], Stop) and verdicts[4].reason == "parked"


def test_r3_narrows_to_the_source_file_named_in_the_failure_not_the_test(tmp_path: Path) -> None:
    hook, ctx, _ = setup(tmp_path, max_stall_cycles=1)
    hook.on_turn_start(ctx, "fix add")
    write(ctx, "calc.py", CALC_BROKEN.replace("a - b", "a - b - 0"))
    verdicts = [hook.on_answer(ctx, "done") for _ in range(3)]
    assert isinstance(verdicts[2], Reenter)
    assert "only the file `calc.py`" in verdicts[2].message


def test_the_seal_turns_stale_on_the_first_write_after_a_check(tmp_path: Path) -> None:
    hook, ctx, rec = setup(tmp_path)
    hook.on_turn_start(ctx, "fix")
    hook.on_tool_result(ctx, write(ctx, "calc.py", CALC_FIXED))
    hook.on_tool_result(ctx, write(ctx, "calc.py", CALC_FIXED))
    assert [e.payload["state"] for e in rec.of("verification")] == ["stale"]


def test_a_claim_with_nothing_written_since_the_last_check_reuses_its_result(
    tmp_path: Path,
) -> None:
    runs: list[str] = []
    hook, ctx, rec = setup(tmp_path)
    inner = hook.gate.run

    def counting(command: str, timeout: float) -> tuple[int | None, str]:
        if "pytest" in command:
            runs.append(command)
        return inner(command, timeout)

    hook.gate.run = counting
    hook.on_turn_start(ctx, "fix")
    hook.on_answer(ctx, "done")
    write(ctx, "calc.py", CALC_BROKEN)
    hook.on_answer(ctx, "done")
    assert len(runs) == 2  # the precheck, then the check after the write
    assert [e.payload["reused"] for e in rec.of("check")] == [False, True, False]


def test_the_hook_is_built_from_the_done_section_of_the_settings(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {
            "workspace": tmp_path,
            "done": {
                "protected": ["tests/**"],
                "max_stall_cycles": 3,
                "escalation": False,
                "criteria": [{"name": "tests", "command": GATE}],
            },
        }
    )
    hook = GateHook.from_settings(settings, NoSandbox())
    assert hook.done == DoneSet((Criterion("tests", GATE),), ("tests/**",))
    assert (hook.max_stall_cycles, hook.escalation, hook.expert) == (3, False, None)
    settings.done.enabled = False
    assert GateHook.from_settings(settings, NoSandbox()).done.criteria == ()


def test_a_turn_that_cannot_write_is_never_reentered(tmp_path: Path) -> None:
    hook, ctx, rec = setup(tmp_path)
    ctx.settings = Settings(workspace=tmp_path, discuss=True)
    hook.on_turn_start(ctx, "how would you fix add?")
    assert hook.on_answer(ctx, "change - to +") is None
    assert hook.on_turn_end(ctx, "completed")["unmet"] == ["tests"]


def test_a_protected_file_changed_by_a_shell_command_is_surfaced(tmp_path: Path) -> None:
    hook, ctx, rec = setup(tmp_path)
    hook.on_turn_start(ctx, "fix")
    cmd = "sed -i 's/== 3/== -1/' tests/test_calc.py"
    NoSandbox().run(CommandSpec(cmd, workspace=tmp_path))
    record = CallRecord(1, "c2", "bash", {"command": cmd}, True, "", exit_code=0, command=cmd)
    hook.on_tool_result(ctx, record)
    assert [e.payload["paths"] for e in rec.of("touched_protected")] == [["tests/test_calc.py"]]
    assert hook.on_answer(ctx, "done") is None  # the weakened test passes: visible, not refused
    assert hook.on_turn_end(ctx, "completed")["touched_protected"] == ["tests/test_calc.py"]


def test_a_command_that_leaves_protected_files_alone_is_not_reported(tmp_path: Path) -> None:
    hook, ctx, rec = setup(tmp_path)
    hook.on_turn_start(ctx, "fix")
    cmd = "echo x > notes.txt"
    NoSandbox().run(CommandSpec(cmd, workspace=tmp_path))
    hook.on_tool_result(ctx, CallRecord(1, "c3", "bash", {"command": cmd}, True, "", command=cmd))
    assert rec.of("touched_protected") == []
