"""commit_plan and update_plan: the model's structured plan, and its progress through it.

Completing a step records a checkpoint (blake3 of each file the step declared, at that moment) so
the report can later say whether the work is still as it was left. A step with a check command is
only checkpointed when the check passes: "done" backed by a failing check is a false report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from ..plan.models import PlanStep
from ..plan.paths import covers, is_pattern, norm_rel
from ..plan.state import PlanState
from ..protocol import CheckpointPayload, Event, PlanCommitted, PlanUpdated
from ..sandbox.command import CommandSpec
from ..workspace.fingerprint.digest import hash_path
from .args import NonBlank
from .base import Declared, RetryClass, Tool, ToolContext, ToolError, ToolResult, display_path

CHECK_TAIL = 2_000  # what the model reads of a failing check: the end, where the error is
#: A plan longer than this is a transcript, not a plan; and the whole call has to fit one reply.
MAX_STEPS = 20


def plan_state(ctx: ToolContext) -> PlanState:
    """The session's plan (session.py hands the PlanHook's own). A bare context gets one of its
    own, kept on it: the tool feeds it every event it publishes."""
    if ctx.plan is None:
        ctx.plan = PlanState()
    return ctx.plan


def _publish(ctx: ToolContext, state: PlanState, type: str, payload: dict[str, Any]) -> Event:
    if ctx.bus is not None:
        ev: Event = ctx.bus.emit(type, payload)
    else:  # no bus (a bare tool test): the state still has to see its own events
        ev = Event(type=type, session_id="local", seq=len(state.events) + 1, payload=payload)
    state.apply(ev)
    return ev


def checkpoint_hashes(ctx: ToolContext, files: list[str]) -> dict[str, str | None]:
    """rel -> blake3 of each declared file now (None when absent).

    Globs and directories are expanded to the files this session wrote under them; only paths
    inside the workspace are read. With a BlobStore at ctx.store the bytes are kept too,
    so the checkpoint can be restored, not just compared.
    """
    rels: list[str] = []
    written = [display_path(ctx.workspace, p) for p in ctx.state.written]
    for raw in files:
        declared = norm_rel(raw, ctx.workspace)
        targets = (
            [w for w in written if covers(declared, w)] if is_pattern(declared) else [declared]
        )
        for rel in targets:
            if rel and not rel.startswith(("../", "/")) and rel != ".." and rel not in rels:
                rels.append(rel)
    store = ctx.store
    if store is not None:
        return dict(store.snapshot_files(rels))
    fp = ctx.fingerprinter
    if fp is not None:
        return {rel: fp.hash_file(rel) for rel in rels}
    out: dict[str, str | None] = {}
    for rel in rels:
        try:
            out[rel] = hash_path(Path(ctx.workspace) / rel)
        except OSError:  # absent, not a regular file, or a link: nothing to checkpoint
            out[rel] = None
    return out


def _free_id(n: int, taken: set[str]) -> str:
    """A step without an id takes its position, or the next number no step holds: `[{"id": "2"},
    {}]` was refused as "two steps have id '2'", a plan the schema allows and nobody duplicated."""
    while str(n) in taken:
        n += 1
    return str(n)


class CommitPlan(Tool):
    name = "commit_plan"
    # Says when a plan pays, for both cases at once: the tools render into the cached prefix, so
    # the text cannot depend on the task (issue 37: "what does calc.py do?" got a 20-step plan).
    description = (
        "Plan work that changes files (a question needs none): steps {id, title, files, check?}"
    )

    class Args(BaseModel):
        steps: list[PlanStep] = Field(
            max_length=MAX_STEPS, description="steps in order; files = paths the step will write"
        )

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        steps: list[PlanStep] = []
        given = {s.id.strip() for s in args.steps} - {""}
        for i, s in enumerate(args.steps):
            sid = s.id.strip() or _free_id(i + 1, given | {t.id for t in steps})
            if any(t.id == sid for t in steps):
                raise ToolError(f"two steps have id {sid!r}; give each step its own id")
            steps.append(
                s.model_copy(
                    update={"id": sid, "files": [norm_rel(f, ctx.workspace) for f in s.files]}
                )
            )
        state = plan_state(ctx)
        revision = state.revision + 1
        _publish(
            ctx,
            state,
            PlanCommitted.event_type,
            {"source": "tool", "revision": revision, "steps": [s.model_dump() for s in steps]},
        )
        if not steps:
            return ToolResult(True, f"plan r{revision} committed with no steps (plan cleared)")
        verb = "revised" if revision > 1 else "committed"
        return ToolResult(
            True,
            f"plan {verb} (r{revision}, {len(steps)} steps). Mark steps with update_plan as you go.",
            meta={"revision": revision},
        )


class UpdatePlan(Tool):
    name = "update_plan"
    description = "Mark a step of your committed plan in_progress or done (optional note)."

    class Args(BaseModel):
        step_id: NonBlank
        status: Literal["in_progress", "done"]
        note: str | None = None

        @field_validator("step_id", mode="before")
        @classmethod
        def _id_to_str(cls, v: Any) -> Any:
            return str(v) if isinstance(v, int | float) else v

    def _step(self, args: Args, ctx: ToolContext) -> Any:
        report = plan_state(ctx).report()
        if report.revision == 0 or not report.steps:
            # A refusal, not a guard's strike: the tool is offered before any plan exists because
            # the tool list is part of the cached prefix (issue 36), so the text names the way on.
            raise ToolError(
                "there is no plan yet: call commit_plan first for work that changes files, "
                "or go on without a plan"
            )
        step = report.step(args.step_id.strip())
        if step is None:
            ids = ", ".join(s.id for s in report.steps)
            raise ToolError(f"no step {args.step_id!r} in the plan; its steps are: {ids}")
        return step

    def declare(self, args: Args, ctx: ToolContext) -> Declared:  # type: ignore[override]
        # The check is a shell command like any other: declared, so the policy sees it first.
        if args.status == "done":
            step = plan_state(ctx).report().step(args.step_id.strip())
            if step is not None and step.check:
                return Declared(command=step.check)
        return Declared()

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        state = plan_state(ctx)
        step = self._step(args, ctx)
        if args.status == "in_progress":
            _publish(
                ctx,
                state,
                PlanUpdated.event_type,
                {"step_id": step.id, "status": "in_progress", "note": args.note},
            )
            return ToolResult(True, f"step {step.id} in progress")
        check_line = ""
        if step.check:
            if ctx.runner is None:
                # Degrade honestly: a check that could not run is "unavailable", never "passed".
                note = f"check `{step.check}` unavailable (no runner); not checkpointed"
                _publish(
                    ctx,
                    state,
                    PlanUpdated.event_type,
                    {"step_id": step.id, "status": "done", "note": note},
                )
                return ToolResult(True, f"step {step.id} marked done; {note}")
            res = ctx.runner.run(
                CommandSpec(
                    step.check,
                    workspace=ctx.workspace,
                    mode=ctx.mode,
                    timeout=ctx.bash_timeout,
                    output_cap=ctx.output_cap,
                    grant=ctx.grant,
                    cancel=ctx.cancel,
                )
            )
            if res.exit_code != 0:
                why = "timed out" if res.timed_out else f"exit {res.exit_code}"
                note = f"check `{step.check}` failed ({why})"
                _publish(
                    ctx,
                    state,
                    PlanUpdated.event_type,
                    {"step_id": step.id, "status": "in_progress", "note": note},
                )
                tail = res.output[-CHECK_TAIL:]
                return ToolResult(
                    False,
                    f"step {step.id} not marked done: {note}. Fix it, then mark it done again.\n{tail}",
                    error_class=RetryClass.ARGS,
                    exit_code=res.exit_code,
                )
            check_line = f"; check `{step.check}` passed"
        hashes = checkpoint_hashes(ctx, step.files)
        _publish(
            ctx,
            state,
            PlanUpdated.event_type,
            {"step_id": step.id, "status": "done", "note": args.note},
        )
        payload: dict[str, Any] = {"step_id": step.id, "hashes": hashes}
        if step.check:
            payload["check"] = step.check
        _publish(ctx, state, CheckpointPayload.event_type, payload)
        nxt = state.report().current
        after = f" Next: step {nxt.id} ({nxt.title})." if nxt is not None else " All steps done."
        return ToolResult(
            True, f"step {step.id} done{check_line}; checkpoint of {len(hashes)} files.{after}"
        )


PLAN_TOOLS: tuple[type[Tool], ...] = (CommitPlan, UpdatePlan)
