"""What the gate does with its decision, each outcome a function of what it needs.

Apart from the hook so each outcome reads on its own: what is said to the person (the events),
what changes on disk (autofix, rollback, the handoff), and what the turn does next.
"""

from __future__ import annotations

from .. import protocol as P
from ..adapters.base import Adapter, RunCommand
from ..hooks import Stop, TurnContext
from ..protocol import TURN_PARKED
from .criteria import Report
from .ladder import clear_handoff, write_handoff
from .near_green import NearGreen
from .verdict import Verdict


def autofix(ctx: TurnContext, adapter: Adapter, run: RunCommand, paths: list[str]) -> list[str]:
    """Clear what a fixer can on the files written (never the protected ones); the lines are
    notes for the model, which must re-read what changed under it."""
    try:
        changed = adapter.autofix(ctx.workspace, run, paths)
    except Exception as exc:  # noqa: BLE001 - a broken fixer must not cost the check
        ctx.emit(P.NoticePayload(text=f"autofix skipped: {exc}"))
        return []
    for line in changed:
        ctx.emit(P.NoticePayload(text=f"autofix: {line}"))
    return [f"autofix: {line} (re-read these files before editing them)" for line in changed]


def accept(ctx: TurnContext, report: Report) -> None:
    """The answer stands; say what the person should still know about it."""
    if report.all_met and clear_handoff(ctx.workspace):
        text = "done criteria met; the parked handoff is resolved and removed"
        ctx.emit(P.NoticePayload(text=text))
    if not report.any_available:
        text = "no done criterion could be checked: " + ", ".join(report.states)
        ctx.emit(P.NoticePayload(text=text))
    if report.touched_protected:
        text = "criteria met, but protected paths were written: " + ", ".join(
            report.touched_protected
        )
        ctx.emit(P.NoticePayload(text=text))


def roll_back(
    ctx: TurnContext, near: NearGreen, verdict: Verdict, progress: bool, written: list[str]
) -> list[str]:
    """Restore the best state seen when the last changes only added errors; else remember this
    one, when it may be remembered (measured by the original tests: a best state earned with a
    weakened test would be the weakened test, restored). Returns the note for the model (empty
    when nothing was rolled back)."""
    unmet, errors = verdict.report.unmet(), verdict.errors
    if not near.should_roll_back(unmet, errors, progress):
        if verdict.by_originals:
            near.observe(unmet, errors)
        return []
    if not near.changed(written):
        # The workspace IS the best state: a rollback would restore nothing, and the note would
        # tell the model its edits were undone when none were.
        return []
    best = near.best
    paths = near.roll_back(written)
    text = (
        f"rolled back to the best state seen ({best[0] if best else '?'} unmet, "
        f"{best[1] if best else '?'} errors): the last changes added new errors "
        f"({len(set(errors))} now); restored {', '.join(paths) or 'nothing'}"
    )
    ctx.emit(
        P.Rollback(
            paths=paths, errors=len(set(errors)), best=list(best) if best else None, text=text
        ),
    )  # the person's line is the rollback's own (protocol/describe.py): said once
    return [text + ". Your last edits are undone; read the files again before editing."]


def park(ctx: TurnContext, report: Report, handoff: str) -> Stop:
    """The ladder ran out: write the handoff a later session resumes from, and stop."""
    path = write_handoff(ctx.workspace, handoff)
    rel = path.relative_to(ctx.workspace).as_posix()
    ctx.emit(
        P.Parked(
            handoff=handoff,
            unmet=report.unmet(),
            path=rel,
            text=f"parked: the escalation ladder ran out; handoff in {rel}",
        ),
    )
    return Stop(
        TURN_PARKED, message=f"{report}\nparked; handoff written to {rel}", extra={"handoff": rel}
    )
