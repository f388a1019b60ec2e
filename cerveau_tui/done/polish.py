"""Polish on green (the seed's polishOnGreen): once the gate passes, one bounded round in which
the model tidies its own diff, then the gate again; red, and the polish is undone.

Why a round at all: a model that has just made the check pass leaves its working behind (a
`print` it debugged with, the old function it no longer calls, a name like `tmp2`), and the
person reviews that diff. Why bounded and checked: "tidying" is exactly the kind of change that
breaks a green suite, and a green result must never be traded for a prettier red one. So the
green state is checkpointed first (near_green.py) and the polish is kept only if the gate still
passes afterwards; otherwise the checkpoint comes back and the green answer stands.

This module holds the state and the words; GateHook (hook.py) runs the checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from .. import protocol as P
from ..hooks import CallRecord, Reenter, Stop, TurnContext
from ..protocol import TURN_COMPLETED
from ..protocol.describe import POLISH_NO_GATE
from .criteria import Report
from .near_green import NearGreen

PolishResult = Literal["kept", "reverted", "skipped"]


def polish_message(written: Sequence[str], max_iterations: int) -> str:
    files = ", ".join(f"`{p}`" for p in written[:12]) or "the files you changed"
    return (
        "The done check passes. Before the turn ends, one short polish round on your own diff "
        f"({files}): remove debug output you added (prints, logging left from debugging), dead or "
        "commented-out code, and unclear names you introduced. Change nothing else: no new "
        "behaviour, no edits to tests. You have at most "
        f"{max_iterations} tool round(s). When finished, or if nothing needs tidying, answer "
        "without calling a tool: the check runs again, and if it fails your polish is undone."
    )


@dataclass
class Polish:
    """One turn's polish: whether it runs, where it started, the green answer that stands."""

    enabled: bool = True
    max_iterations: int = 4
    active: bool = False
    finished: bool = False  # this turn's polish happened (kept or reverted): never twice
    started_at: int = 0  # the iteration whose answer was green
    answer: str = ""  # the green answer: the turn's result whatever the polish does

    def reset(self) -> None:
        self.active = self.finished = False
        self.started_at = 0
        self.answer = ""

    def begin(self, iteration: int, answer: str) -> None:
        self.active, self.started_at, self.answer = True, iteration, answer

    def end(self) -> None:
        self.active, self.finished = False, True

    def out_of_rounds(self, iteration: int) -> bool:
        """The polish has used its rounds: check now, whatever the model is doing."""
        return self.active and iteration - self.started_at >= self.max_iterations


#: Why polish is skipped on every turn of a session without a gate (no line says it: the words
#: live with the one table of lines, protocol/describe.py).
NO_GATE = POLISH_NO_GATE


def emit_polish(ctx: TurnContext, result: PolishResult, reason: str) -> None:
    ctx.emit(P.PolishPayload(result=result, reason=reason))


def why_no_polish(polish: Polish, report: Report, calls: Sequence[CallRecord]) -> str | None:
    """Why this green answer gets no polish round; None when it gets one."""
    if not polish.enabled:
        return "polish is off ([done] polish = false)"
    if polish.finished:
        return "already polished this turn"
    if not report.all_met:
        return "nothing could be checked"
    # The calls' own record of what they changed (bash's by fingerprint): a turn that only ran
    # commands has no diff to tidy.
    if not any(c.wrote for c in calls):
        return "nothing written this turn"
    return None


def begin_polish(ctx: TurnContext, polish: Polish, near: NearGreen, answer: str) -> Reenter:
    near.capture()  # the green state: where a red polish comes back to
    polish.begin(ctx.iteration, answer)
    written = sorted({p for c in ctx.calls for p in c.wrote})
    ctx.emit(P.NoticePayload(text="the gate passes; one polish round, then the gate again"))
    return Reenter(polish_message(written, polish.max_iterations))


def finish_polish(
    ctx: TurnContext,
    polish: Polish,
    near: NearGreen | None,
    recheck: Callable[[], Report],
    ended: str | None = None,
) -> Stop:
    """The gate again after the polish (`recheck`, forced): green keeps it, red restores the
    green checkpoint and checks once more so the seal reads from the restored state. Either way
    the green answer is the turn's result. `ended`: the turn ended before the model did."""
    polish.end()
    written = sorted({p for c in ctx.calls if c.iteration > polish.started_at for p in c.wrote})
    if not written:
        emit_polish(ctx, "kept", "the polish changed nothing")
        return Stop(TURN_COMPLETED, message=polish.answer)
    report = recheck()
    if report.all_met:
        emit_polish(ctx, "kept", "the gate still passes after the polish of " + ", ".join(written))
        return Stop(TURN_COMPLETED, message=polish.answer)
    # Only what the polish wrote is removed if new: a file the checkpoint did not walk (a skipped
    # directory, too big) and the polish never touched must not vanish.
    restored = near.roll_back(written) if near is not None and near.snapshot is not None else []
    recheck()
    why = "the gate went red" + (f" (the turn ended: {ended})" if ended else "")
    emit_polish(
        ctx,
        "reverted",
        f"{why}: {', '.join(report.unmet()) or 'unchecked'} unmet after the polish; the green "
        "state is back (" + (", ".join(restored) or "nothing to restore") + ")",
    )
    return Stop(TURN_COMPLETED, message=polish.answer)
