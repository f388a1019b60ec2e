"""At the hook points: R3's one-file lock, a turn that ends mid-polish, a gate changed mid-session."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.done.criteria import DoneSet
from cerveau_tui.done.ladder import rung_refusal
from cerveau_tui.hooks import CallRecord, Reenter, TurnContext
from cerveau_tui.workspace.restore.store import BlobStore

from .conftest import CALC_FIXED
from .test_hook import TESTS, setup


def wrote(ctx: TurnContext, rel: str, text: str) -> None:
    (ctx.workspace / rel).write_text(text)
    ctx.state.record_write(ctx.workspace / rel)  # type: ignore[attr-defined]
    ctx.calls.append(
        CallRecord(ctx.iteration, "c", "write_file", {"path": rel}, True, "ok", wrote=[rel])
    )


def test_r3s_round_refuses_writing_another_file_than_the_one_named() -> None:
    narrow = (5, "calc.py")
    assert rung_refusal(None, narrow, 5, "edit_file", {"path": "calc.py"}) is None
    assert rung_refusal(None, narrow, 5, "edit_file", {"path": "./calc.py"}) is None
    refused = rung_refusal(None, narrow, 5, "write_file", {"path": "tests/test_calc.py"})
    assert refused is not None and "`calc.py`" in refused
    assert rung_refusal(None, narrow, 6, "write_file", {"path": "other.py"}) is None  # next round
    assert rung_refusal(None, narrow, 5, "read_file", {"path": "other.py"}) is None


def test_r1s_round_refuses_every_call_but_a_read() -> None:
    assert rung_refusal(3, None, 3, "bash", {"command": "sed -i s/-/+/ calc.py"}) is not None
    assert rung_refusal(3, None, 3, "search", {"pattern": "add"}) is None
    assert rung_refusal(3, None, 4, "bash", {"command": "true"}) is None


def test_a_turn_ending_mid_polish_gets_the_polish_checked_and_undone_when_red(
    tmp_path: Path,
) -> None:
    hook, ctx, rec = setup(tmp_path, polish=True, store=BlobStore)
    hook.on_turn_start(ctx, "fix")
    ctx.iteration = 1
    wrote(ctx, "calc.py", CALC_FIXED)
    assert isinstance(hook.on_answer(ctx, "Fixed."), Reenter)  # the polish round
    ctx.iteration = 2
    wrote(ctx, "calc.py", CALC_FIXED.replace("a + b", "a * b"))
    end = hook.on_turn_end(ctx, "interrupted")
    assert [e.payload["result"] for e in rec.of("polish")] == ["reverted"]
    assert (tmp_path / "calc.py").read_text() == CALC_FIXED
    assert end["verification"] == "passed"


def test_a_gate_put_in_force_mid_session_is_announced_once_in_a_reminder(tmp_path: Path) -> None:
    hook, ctx, _ = setup(tmp_path, done=DoneSet())
    gate = hook.gate
    assert gate.system_sections() == [] and gate.reminders(ctx) == []
    gate.use(TESTS)
    said = gate.reminders(ctx)
    assert len(said) == 1 and "definition of done changed" in said[0] and "`tests`" in said[0]
    assert gate.reminders(ctx) == []
