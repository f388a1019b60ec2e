"""The gate's decision: given what a check found, accept, re-enter, climb the ladder, or stop.

Kept pure (no processes, no events) because it is the part easiest to get subtly wrong: whether a
cycle counts as progress decides whether a model doing slow, right work is escalated, and whether
a model going in circles is ever stopped.

How `max_stall_cycles` and the ladder fit together (the issue states both): stall cycles count
cycles without progress; each time the count reaches `max_stall_cycles` the gate climbs ONE rung
and the count starts again, so every rung gets the same chance the plain report had. When no rung
is left the run parks (reason "parked", with a handoff). With escalation switched off
(`[done] escalation = false`) reaching the count ends the turn as "incomplete" with the report,
which is the issue's plain reading. Progress (strict shrinkage of the unmet set, or an error count
at a new low) resets the count but not the rung: a model that needed R2 to move keeps R2's room.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from .criteria import Report, progressed
from .errors import check_stuck
from .ladder import next_rung

Action = Literal["accept", "reenter", "escalate", "park", "incomplete"]


@dataclass(frozen=True)
class Decision:
    action: Action
    progress: bool = False
    stall: int = 0
    rung: str | None = None
    why: str = ""


@dataclass
class Gate:
    max_stall_cycles: int = 2
    escalation: bool = True
    expert_configured: bool = False
    best_unmet: list[str] | None = None  # the smallest unmet set seen this turn
    error_history: list[list[str]] = field(default_factory=list)
    stall: int = 0
    rung: str | None = None
    rungs_tried: list[str] = field(default_factory=list)

    def baseline(self, report: Report, errors: Sequence[str]) -> None:
        """What the workspace looked like before the model did anything (the red precheck)."""
        self.best_unmet = report.unmet()
        self.error_history = [list(errors)]

    def judge(self, report: Report, errors: Sequence[str]) -> Decision:
        unmet = report.unmet()
        self.error_history.append(list(errors))
        if not unmet:
            # Everything that could run passed; or nothing could run, and an unavailable criterion
            # never provokes re-entry (insisting on what cannot be checked produces a guess).
            why = "all met" if report.all_met else "nothing checkable"
            return Decision("accept", progress=True, why=why)
        if self.best_unmet is None:
            # No earlier state to compare with (precheck off): the first check is the baseline.
            self.best_unmet = unmet
            return Decision("reenter", progress=False, stall=self.stall, why="first check")
        moved = progressed(self.best_unmet, unmet)
        regressed = not set(unmet) <= set(self.best_unmet)
        if moved or (not regressed and not check_stuck(self.error_history)):
            if moved:
                self.best_unmet = unmet
            self.stall = 0
            why = "unmet set shrank" if moved else "error count at a new low"
            return Decision("reenter", progress=True, stall=0, rung=self.rung, why=why)
        self.stall += 1
        why = "unmet set grew" if regressed else "same errors"
        if self.stall < self.max_stall_cycles:
            return Decision("reenter", stall=self.stall, rung=self.rung, why=why)
        self.stall = 0
        if not self.escalation:
            return Decision("incomplete", stall=self.max_stall_cycles, why=why)
        rung = next_rung(self.rung, self.expert_configured)
        if rung is None:
            return Decision("park", stall=self.max_stall_cycles, rung=self.rung, why=why)
        self.rung = rung
        self.rungs_tried.append(rung)
        return Decision("escalate", stall=self.max_stall_cycles, rung=rung, why=why)
