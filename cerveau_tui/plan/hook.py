"""PlanHook: how plans take part in a turn.

- A plan exists -> at turn start the model is told it as guidance, not a script (autopilot after a
  discussion-mode plan; the agent follows its intent and adapts). It goes in as a harness message,
  never into the system prompt, which is the cache prefix and must not change per turn.
- A Markdown write that is plan-shaped -> committed as a structured plan (source "file"), and the
  chat and the model are told so: the translation is disclosed, not silent. The file is kept.
- A write outside the plan's declared files -> a `drift` event and a line for the model; the write
  is never blocked.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hooks import BriefLine, BriefSection, CallRecord, Hook, Stop, TurnContext
from ..protocol import Drift, Event, NoticePayload, PlanCommitted
from ..workspace.io.beneath import read_bytes_beneath
from .detect import looks_like_plan_file, plan_from_markdown
from .drift import drift_for_write
from .models import FINISHED, PlanReport, PlanStep, StepReport, StepStatus
from .paths import norm_rel
from .state import PlanState

if TYPE_CHECKING:
    from ..workspace.fingerprint.fingerprinter import Fingerprinter

MAX_PLAN_FILE = 256_000  # a plan is a page, not a log; bigger Markdown is not read for one
_MARK = {
    StepStatus.PENDING: " ",
    StepStatus.IN_PROGRESS: "~",
    StepStatus.DONE: "x",
    StepStatus.DONE_UNCONFIRMED: "x?",
    StepStatus.CHANGED: "x*",
    StepStatus.MISSING: "!",
}


def plan_guidance(report: PlanReport) -> str:
    lines = [
        f"Plan (guidance, adapt as needed; r{report.revision}, {report.done_count}/{report.total} done):"
    ]
    for s in report.steps:
        lines.append(f"[{_MARK[s.status]}] {s.id}. {s.title}{_files(s.files)}")
    lines.append("Mark steps with update_plan; call commit_plan again if the plan should change.")
    return "\n".join(lines)


def _files(files: Sequence[str]) -> str:
    return f" [{', '.join(files)}]" if files else ""


def _same_steps(a: Sequence[PlanStep | StepReport], b: Sequence[PlanStep | StepReport]) -> bool:
    return [(s.title, s.files) for s in a] == [(s.title, s.files) for s in b]


class PlanHook(Hook):
    name = "plan"

    def __init__(
        self,
        workspace: Path,
        state: PlanState | None = None,
        fingerprinter: Fingerprinter | None = None,
    ) -> None:
        self.workspace = workspace
        # The session's plan ledger, the same object the plan tools get and the session reports
        # from (session/__init__.py), with the session's workspace and fingerprinter; without
        # one the hook keeps its own. Either way it follows the bus from the first turn.
        self.state = (
            state
            if state is not None
            else PlanState(workspace=workspace, fingerprinter=fingerprinter)
        )
        self._drifted: set[tuple[int, str]] = set()  # (revision, path): one flag per file per plan
        self._bus: object | None = None

    def reconciled(self) -> PlanReport:
        """The ledger's report: checkpoint events and the files on disk. The event-only report
        told the model "pending" for a step whose files were written and on disk (cut short
        before its completion event), and the model redid the work."""
        return self.state.reconciled()

    def _emit(self, ctx: TurnContext, type: str, payload: dict[str, object]) -> Event | None:
        ev = ctx.bus.emit(type, payload)
        if isinstance(ev, Event):
            self.state.apply(ev)
        return ev

    def on_turn_start(self, ctx: TurnContext, task: str) -> Stop | None:
        if self._bus is not ctx.bus:
            self._bus = ctx.bus
            ctx.bus.subscribe(self.state)  # apply is idempotent: shared AND subscribed is fine
        report = self.reconciled()
        if report.steps and any(s.status not in FINISHED for s in report.steps):
            ctx.tell(plan_guidance(report))
        self.state.publish(ctx.bus)  # what changed between turns (an undo, a `!cmd`, a resume)
        return None

    # The views learn the report from the worker, at the points a turn can change it: after
    # each round of tool calls, and at the turn's end (a rollback, a stop before the round's end).
    def after_iteration(self, ctx: TurnContext) -> Stop | None:
        self.state.publish(ctx.bus)
        return None

    def on_turn_end(self, ctx: TurnContext, reason: str) -> dict[str, Any]:
        self.state.publish(ctx.bus)
        return {}

    def resume_brief(self) -> list[BriefLine]:
        """One line per step with its reconciled status, then each step's note as a decision."""
        report = self.reconciled()
        plan, decision = BriefSection.PLAN, BriefSection.DECISION
        lines = [
            BriefLine(plan, f"{s.id}. {s.title}{_files(s.files)}: {s.status}") for s in report.steps
        ]
        lines += [BriefLine(decision, f"step {s.id}: {s.note}") for s in report.steps if s.note]
        return lines

    def on_tool_result(self, ctx: TurnContext, record: CallRecord) -> str | None:
        if not record.ok or not record.wrote:
            return None
        notes: list[str] = []
        for raw in record.wrote:
            rel = norm_rel(raw, self.workspace)
            note = self._plan_file(ctx, rel) if rel.lower().endswith((".md", ".markdown")) else None
            if note is None:
                note = self._drift(ctx, rel)
            if note:
                notes.append(note)
        if not notes:
            return None
        return record.output + "\n" + "\n".join(f"[plan] {n}" for n in notes)

    def _plan_file(self, ctx: TurnContext, rel: str) -> str | None:
        try:
            text = read_bytes_beneath(self.workspace, rel, MAX_PLAN_FILE).decode("utf-8", "replace")
        except OSError:  # too large, gone, or a link out of the workspace: not a plan file
            return None
        if not looks_like_plan_file(rel, text):
            return None
        steps = plan_from_markdown(text)
        if steps is None:
            return None
        current = self.state.report()
        if current.source == "tool" and current.steps:
            # The model already committed a structured plan; a Markdown copy is documentation, and
            # re-reading it (ids renumbered, files only where backticked) would degrade the plan.
            return ""
        if rel in current.plan_files and _same_steps(steps, current.steps):
            return ""  # the same plan rewritten (a typo fixed, a box ticked): nothing new to commit
        revision = current.revision + 1
        self._emit(
            ctx,
            PlanCommitted.event_type,
            {
                "source": "file",
                "path": rel,
                "revision": revision,
                "steps": [s.model_dump() for s in steps],
            },
        )
        message = f"{rel} looks like a plan: committed it as the session plan (r{revision}, {len(steps)} steps)"
        self._emit(ctx, NoticePayload.event_type, {"text": message, "source": "plan"})
        return f"{message}. Track it with update_plan (step ids 1-{len(steps)}); the file was written as asked."

    def _drift(self, ctx: TurnContext, rel: str) -> str | None:
        report = self.state.report()
        message = drift_for_write(report, rel)
        if message is None or (report.revision, rel) in self._drifted:
            return None
        self._drifted.add((report.revision, rel))
        cur = report.current
        self._emit(
            ctx,
            Drift.event_type,
            {"path": rel, "step_id": cur.id if cur else None, "message": message},
        )
        return f"{message}. Fine if intended; if the plan changed, call commit_plan with the revised steps."
