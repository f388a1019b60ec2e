"""Error ages and stuck detection: telling slow from stalled.

The unmet set alone is too coarse: a suite of forty failing tests is one unmet criterion until the
last one passes, so a model fixing a test per cycle would look stalled and be escalated for doing
exactly the right thing. Per-error bookkeeping is what separates the two: a falling error count is
progress even when slow; the same error set turn after turn is not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from .criteria import Report


class ErrorParser(Protocol):
    def error_lines(self, output: str) -> list[str]: ...


def errors_of(report: Report, parser: ErrorParser) -> list[str]:
    """The normalised error keys of every unmet criterion, prefixed by the criterion's name so
    two criteria reporting the same text stay two errors."""
    keys: list[str] = []
    for name in report.unmet():
        lines = parser.error_lines(report.outputs.get(name, ""))
        keys += [f"{name}: {line}" for line in lines]
    return keys


class ErrorAges:
    """How many consecutive cycles each error has survived.

    The age is what R3 narrows to (the oldest error is the one the model keeps failing at) and
    what the handoff reports; an error that disappears and comes back starts again at one.
    """

    def __init__(self) -> None:
        self._ages: dict[str, int] = {}
        self._order: dict[str, int] = {}  # first-seen rank, for a deterministic tie-break

    def update(self, errors: Iterable[str]) -> None:
        current = list(dict.fromkeys(errors))
        self._ages = {e: self._ages.get(e, 0) + 1 for e in current}
        for e in current:
            self._order.setdefault(e, len(self._order))

    def age(self, error: str) -> int:
        return self._ages.get(error, 0)

    def items(self) -> list[tuple[str, int]]:
        """(error, age), oldest first; ties in the order the errors first appeared."""
        return sorted(self._ages.items(), key=lambda kv: (-kv[1], self._order[kv[0]]))

    def oldest(self) -> str | None:
        items = self.items()
        return items[0][0] if items else None

    def __len__(self) -> int:
        return len(self._ages)


def check_stuck(history: Sequence[Sequence[str]]) -> bool:
    """Whether the last cycle failed to move the errors.

    `history` is the error keys of each cycle, oldest first. Not stuck while the last count is a
    new low (slow is fine). Stuck when the count did not fall below every earlier cycle: the same
    set again, or errors swapped one-for-one. Against the best-so-far rather than the previous
    cycle, because 3, 2, 3, 2... alternates "progress" with "regression" against the previous one
    and would reset the stall count forever.
    """
    if len(history) < 2:
        return False
    last = len(set(history[-1]))
    best_before = min(len(set(h)) for h in history[:-1])
    return last >= best_before
