"""SealHook: the always-on half of the definition of done.

Present in every session, criteria or not: protected paths are surfaced when written (by a file
tool or a command), the seal on the status bar turns stale on the first write after a check, and
turn_ended carries the verification seal. It runs no check itself: the checks belong to the
opt-in GateHook (hook.py), which records them in the SealState both hooks share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import protocol as P
from .. import state_home
from ..hooks import BriefLine, BriefSection, CallRecord, Hook, TurnContext
from .criteria import DoneSet, Report, done_set_from_config, is_stale, verification_of
from .ladder import HANDOFF_FILE, load_handoff
from .protected import changed_paths, protected_state


@dataclass
class SealState:
    """What the seal is computed from, shared by the SealHook and the GateHook.

    Session-long on purpose: a question asked after a green turn is still "passed", so the last
    report and the write count it saw outlive the turn that produced them.
    """

    write_seq: Callable[[], int] | None = None  # the session's write count; else the context's
    report: Report | None = None
    checked_seq: int | None = None
    baseline_seq: int | None = None
    stale_shown: bool = False
    # A command ran since the last check. The bash tool moves the write count too; this does not
    # rely on it, since a command's effects are the ones nobody declared.
    ran_command: bool = False
    touched: list[str] = field(default_factory=list)  # protected paths written this turn
    # The last verdict was measured by the original protected files (done/verdict.py).
    by_originals: bool = True
    protected: dict[str, str] = field(default_factory=dict)  # rel -> hash, as last seen
    # What must happen to the workspace before the seal is read at the turn's end (the gate's
    # unfinished polish is checked or undone): the seal must describe what the turn leaves.
    settle: Callable[[TurnContext, str], None] | None = None

    def seq(self, ctx: TurnContext) -> int:
        return self.write_seq() if self.write_seq is not None else ctx.state.write_seq

    def record(self, report: Report, seq: int, by_originals: bool = True) -> None:
        """A check ran (or was reused) at write count `seq`: the seal now reads from it."""
        self.report, self.checked_seq, self.by_originals = report, seq, by_originals
        self.stale_shown = False
        self.ran_command = False


class SealHook(Hook):
    name = "seal"

    def __init__(self, done: DoneSet, *, state: SealState | None = None) -> None:
        self.done = done
        self.state = state if state is not None else SealState()
        self._first_turn = True

    @classmethod
    def from_settings(cls, settings: Any, *, state: SealState | None = None) -> SealHook:
        """Protected paths come from Settings.done even when the gate is disabled."""
        criteria = settings.done.criteria if settings.done.enabled else []
        return cls(done_set_from_config(criteria, settings.done.protected), state=state)

    def on_turn_start(self, ctx: TurnContext, task: str) -> None:
        s = self.state
        s.touched = []
        s.protected = protected_state(ctx.workspace, self.done)
        if s.baseline_seq is None:
            s.baseline_seq = s.seq(ctx)
        if self._first_turn:
            self._first_turn = False
            self._resume_handoff(ctx)

    def _resume_handoff(self, ctx: TurnContext) -> None:
        # Read even with the gate off now: what a parked session learned is still worth telling
        # the model; only the gate, once green, removes the file.
        handoff = load_handoff(ctx.workspace)
        if handoff:
            ctx.tell(
                "A previous session parked on this work and left this handoff; resume "
                "from it instead of starting over:\n" + handoff
            )
            where = state_home.shown(ctx.workspace, HANDOFF_FILE.name)
            ctx.emit(P.NoticePayload(text=f"resuming from the handoff in {where}"))

    def resume_brief(self) -> list[BriefLine]:
        report = self.state.report
        unmet = report.unmet() if report is not None else []
        return [BriefLine(BriefSection.UNMET, name) for name in unmet]

    def on_tool_result(self, ctx: TurnContext, record: CallRecord) -> str | None:
        s = self.state
        if s.report is not None and not s.stale_shown and is_stale(s.checked_seq, s.seq(ctx)):
            # The status bar turns stale on the write itself, not at the end of the turn:
            # "passed" on screen while the model rewrites the file is the false confidence.
            s.stale_shown = True
            ctx.emit(P.VerificationPayload(state="stale", unmet=s.report.unmet()))
        wrote = list(record.wrote)
        s.ran_command = s.ran_command or record.command is not None
        if record.command is not None and self.done.protected:
            after = protected_state(ctx.workspace, self.done)
            wrote += changed_paths(s.protected, after)
            s.protected = after
        hits = [p for p in self.done.touched_protected(wrote) if p not in s.touched]
        if hits:
            s.touched += hits
            text = (
                "protected path(s) written: "
                + ", ".join(hits)
                + " (they are the measurement; the change is in the final report)"
            )
            ctx.emit(
                P.TouchedProtected(paths=hits, call_id=record.call_id, tool=record.name, text=text),
            )  # the person's line is this event's own (protocol/describe.py): said once
        return None

    def on_turn_end(self, ctx: TurnContext, reason: str) -> dict[str, Any]:
        s = self.state
        if s.settle is not None:
            s.settle(ctx, reason)
        seq = s.seq(ctx)
        changed = seq > (s.baseline_seq or 0)
        # Without criteria nothing is ever checked, so nothing can go stale: the seal says
        # "unavailable" for a change, never "stale".
        stale = is_stale(s.checked_seq, seq) if self.done.criteria else False
        seal = verification_of(s.report, changed, stale)
        unmet = s.report.unmet() if s.report is not None else []
        ctx.emit(P.VerificationPayload(state=str(seal), unmet=unmet))
        return {"verification": str(seal), "unmet": unmet, "touched_protected": sorted(s.touched)}
