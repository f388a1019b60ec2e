"""commit_plan and update_plan against a real bus, a real workspace and a real (unsandboxed) runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.plan.models import StepStatus
from cerveau_tui.plan.report import build_report_at
from cerveau_tui.plan.state import PlanState
from cerveau_tui.sandbox.none import NoSandbox
from cerveau_tui.tools.base import ToolContext, ToolError, ToolState
from cerveau_tui.tools.plan_tools import CommitPlan, UpdatePlan
from cerveau_tui.workspace.fingerprint.digest import hash_bytes
from cerveau_tui.workspace.restore.store import BlobStore


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, state=ToolState(), runner=NoSandbox(), bus=Emitter("t"))


def _commit(ctx: ToolContext, steps: list[dict[str, object]]) -> str:
    return CommitPlan().run(CommitPlan.Args.model_validate({"steps": steps}), ctx).output


def _update(ctx: ToolContext, step_id: object, status: str, note: str | None = None):  # type: ignore[no-untyped-def]
    tool = UpdatePlan()
    return tool.run(
        tool.Args.model_validate({"step_id": step_id, "status": status, "note": note}), ctx
    )


def test_commit_publishes_the_plan_and_keeps_state(ctx: ToolContext) -> None:
    rec = Recorder(ctx.bus)
    out = _commit(
        ctx, [{"id": 1, "title": "parser", "files": "src/p.py, src/q.py"}, {"title": "cli"}]
    )
    assert "r1" in out
    [ev] = rec.of("plan_committed")
    assert ev.payload["source"] == "tool" and ev.payload["revision"] == 1
    assert [(s["id"], s["files"]) for s in ev.payload["steps"]] == [
        ("1", ["src/p.py", "src/q.py"]),
        ("2", []),
    ]
    assert isinstance(ctx.plan, PlanState)


def test_recommit_increments_the_revision(ctx: ToolContext) -> None:
    _commit(ctx, [{"id": "1", "title": "a"}])
    assert "revised (r2" in _commit(ctx, [{"id": "1", "title": "a"}, {"id": "2", "title": "b"}])


def test_duplicate_step_ids_are_an_argument_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="two steps have id '1'"):
        _commit(ctx, [{"id": "1", "title": "a"}, {"id": "1", "title": "b"}])


def test_update_without_a_plan_says_to_commit_one(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="commit_plan first"):
        _update(ctx, "1", "done")


def test_update_of_an_unknown_step_lists_the_real_ids(ctx: ToolContext) -> None:
    _commit(ctx, [{"id": "a", "title": "x"}, {"id": "b", "title": "y"}])
    with pytest.raises(ToolError, match="its steps are: a, b"):
        _update(ctx, "c", "done")


def test_done_checkpoints_the_blake3_of_the_step_files(ctx: ToolContext, tmp_path: Path) -> None:
    rec = Recorder(ctx.bus)
    _commit(
        ctx,
        [
            {"id": "1", "title": "p", "files": ["src/p.py", "src/gone.py"]},
            {"id": "2", "title": "q"},
        ],
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "p.py").write_text("code")
    res = _update(ctx, 1, "done")
    assert res.ok and "Next: step 2" in res.output
    [cp] = rec.of("checkpoint")
    assert cp.payload == {
        "step_id": "1",
        "hashes": {"src/p.py": hash_bytes(b"code"), "src/gone.py": None},
    }
    assert [e.payload["status"] for e in rec.of("plan_updated")] == ["done"]


def test_a_passing_check_is_run_and_checkpointed(ctx: ToolContext, tmp_path: Path) -> None:
    rec = Recorder(ctx.bus)
    _commit(ctx, [{"id": "1", "title": "p", "files": ["ok.txt"], "check": "test -f ok.txt"}])
    (tmp_path / "ok.txt").write_text("ok")
    res = _update(ctx, "1", "done")
    assert res.ok and "check `test -f ok.txt` passed" in res.output
    assert rec.of("checkpoint")[0].payload["check"] == "test -f ok.txt"


def test_a_failing_check_leaves_the_step_in_progress_without_a_checkpoint(ctx: ToolContext) -> None:
    rec = Recorder(ctx.bus)
    _commit(ctx, [{"id": "1", "title": "p", "check": "echo boom; exit 4"}])
    res = _update(ctx, "1", "done")
    assert not res.ok and res.exit_code == 4 and "boom" in res.output
    assert rec.of("checkpoint") == []
    assert ctx.plan.report().steps[0].status == StepStatus.IN_PROGRESS


def test_the_check_is_declared_as_a_command_for_the_policy(ctx: ToolContext) -> None:
    _commit(ctx, [{"id": "1", "title": "p", "check": "pytest -q"}])
    tool = UpdatePlan()
    assert tool.declare(tool.Args(step_id="1", status="done"), ctx).command == "pytest -q"
    assert tool.declare(tool.Args(step_id="1", status="in_progress"), ctx).command is None


def test_with_a_store_the_checkpoint_can_be_restored(ctx: ToolContext, tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    ctx.store = store
    rec = Recorder(ctx.bus)
    _commit(ctx, [{"id": "1", "title": "p", "files": ["a.txt"]}])
    (tmp_path / "a.txt").write_text("v1")
    _update(ctx, "1", "done")
    (tmp_path / "a.txt").write_text("v2")
    store.restore(rec.of("checkpoint")[0].payload["hashes"])
    assert (tmp_path / "a.txt").read_text() == "v1"


def test_tool_events_drive_build_report_at(ctx: ToolContext, tmp_path: Path) -> None:
    rec = Recorder(ctx.bus)
    _commit(ctx, [{"id": "1", "title": "p", "files": ["a.txt"]}])
    (tmp_path / "a.txt").write_text("v1")
    _update(ctx, "1", "in_progress")
    _update(ctx, "1", "done")
    assert build_report_at(rec.events, tmp_path).steps[0].status == StepStatus.DONE
    (tmp_path / "a.txt").write_text("v2")
    assert build_report_at(rec.events, tmp_path).steps[0].status == StepStatus.CHANGED


def test_schemas_are_flat_and_short() -> None:
    for tool in (CommitPlan, UpdatePlan):
        schema = tool.schema()
        assert "$defs" not in str(schema) and len(schema["description"]) < 100


def test_a_check_that_cannot_run_is_unavailable_not_passed(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, state=ToolState(), runner=None, bus=Emitter("t"))
    rec = Recorder(ctx.bus)
    _commit(ctx, [{"id": "1", "title": "p", "check": "pytest -q"}])
    res = _update(ctx, "1", "done")
    assert "unavailable" in res.output and rec.of("checkpoint") == []


def test_plan_state_applies_each_event_once(ctx: ToolContext) -> None:
    state = PlanState()
    ctx.plan = state
    ctx.bus.subscribe(state)  # subscribed AND fed directly by the tool
    _commit(ctx, [{"id": "1", "title": "p"}])
    assert len(state.events) == 1 and state.revision == 1
