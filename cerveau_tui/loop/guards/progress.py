"""Progress detection: is the artifact changing?

Counting tool errors makes calm, confident uselessness invisible: the two worst benchmark runs had
almost no errors at all (and the field reports 15 tasks that spent all 30 turns without one edit).
What separates them from real work is not error count, tool count or duration but whether the
workspace changed. A model that writes files is working however slowly; one that has left the
workspace byte-identical for `limit` iterations is circling. Reads alone are not work.

A plan revised with nothing changed since the revision before it is the same circling at a
higher price (issue 37: "what does calc.py do?" got a 20-step `commit_plan` revised r1-r4 with no
file read or written; at 1 tok/s that was the whole test's time, and four rounds never reached
the limit of eight). So such a revision is a no-progress round that also ends the streak early:
the second in a row stops the turn. Two, because the legitimate case exists: a first plan, then
one revision after looking; a third plan with nothing done since the second is going round.

The fingerprint is injected (the engine passes the workspace's blake3 digest), so this stays pure
and a test can drive it with a counter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: Revisions in a row, each with the workspace as the revision before left it, that stop the turn.
REPLAN_LIMIT = 2


@dataclass
class Stall:
    iterations: int
    message: str


class WorkTracker:
    """Counts consecutive iterations that leave the workspace fingerprint unchanged.

    `observe` is called once after every iteration with what the model did in it, as strings
    "tool target" (e.g. "read_file a.py", "search TODO", "bash pytest -q"), or just "tool", and
    whether a plan was committed in it (`revised`).
    """

    def __init__(self, fingerprint: Callable[[], str], limit: int = 8) -> None:
        self.fingerprint = fingerprint
        self.limit = max(1, limit)
        self._baseline: str | None = None
        self._still: list[tuple[int, list[str]]] = []
        self._plan_at: str | None = None  # the workspace when this turn's plan was last committed
        self._replans = 0

    def reset(self) -> None:
        """Start counting afresh from the workspace as it is now (call at the start of a turn).
        A plan from an earlier turn is not "the revision before": the person may have asked for
        the plan to change."""
        self._baseline = self.fingerprint()
        self._still = []
        self._plan_at, self._replans = None, 0

    def observe(self, iteration: int, actions: list[str], revised: bool = False) -> Stall | None:
        now = self.fingerprint()
        if revised:
            self._replans = self._replans + 1 if now == self._plan_at else 0
            self._plan_at = now
        if self._baseline is not None and now != self._baseline:
            self._baseline = now
            self._still = []
            return None
        # No baseline (reset() was never called): this iteration cannot be shown to have changed
        # anything, so it counts as still; the error is one iteration, towards leniency never.
        self._baseline = now
        self._still.append((iteration, list(actions)))
        replanned = self._replans >= REPLAN_LIMIT
        if len(self._still) < self.limit and not replanned:
            return None
        stall = Stall(iterations=len(self._still), message=stall_message(self._still, replanned))
        self._still, self._replans = [], 0  # one stop per streak, should the caller continue
        return stall


def summarise_actions(actions: list[str], max_targets: int = 3) -> str:
    """ "read_file x5 (a.py, b.py), search x3" from ["read_file a.py", ..., "search TODO", ...]."""
    order: list[str] = []
    counts: dict[str, int] = {}
    targets: dict[str, list[str]] = {}
    for action in actions:
        name, _, target = action.strip().partition(" ")
        if not name:
            continue
        if name not in counts:
            order.append(name)
            counts[name] = 0
            targets[name] = []
        counts[name] += 1
        target = " ".join(target.split())
        if len(target) > 40:
            target = target[:39] + "…"
        if target and target not in targets[name]:
            targets[name].append(target)
    parts = []
    for name in sorted(order, key=lambda n: (-counts[n], order.index(n))):
        part = f"{name} x{counts[name]}"
        ts = targets[name]
        if ts:
            shown = ", ".join(ts[:max_targets]) + (
                f", +{len(ts) - max_targets} more" if len(ts) > max_targets else ""
            )
            part += f" ({shown})"
        parts.append(part)
    return ", ".join(parts) if parts else "no tool calls"


def stall_message(still: list[tuple[int, list[str]]], replanned: bool = False) -> str:
    actions = [a for _, acts in still for a in acts]
    first, last = still[0][0], still[-1][0]
    head = f"{len(still)} iterations without changing any file (iterations {first}-{last}): "
    if replanned:
        return (
            f"{head}{summarise_actions(actions)}. The plan was revised {REPLAN_LIMIT} times in a "
            "row with nothing changed since the revision before, so the turn was stopped. A plan "
            "pays only when its steps change files; a question needs no plan, only the answer."
        )
    return (
        f"{head}{summarise_actions(actions)}. Reading and searching alone are not progress, so "
        "the turn was stopped."
    )
