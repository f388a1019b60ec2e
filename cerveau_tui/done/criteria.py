"""The definition of done: criteria that can be CHECKED, the report a check produces, progress as
strict shrinkage of the unmet set, and the verification seal the client shows.

Pure except for `check`, whose only side effect (running a command) is injected, so every rule
here is testable without a process and the engine can route every command through the sandbox.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from ..adapters.base import RunCommand
from ..adapters.runnable import cannot_run
from ..policy.glob import glob_match


@dataclass(frozen=True)
class Criterion:
    """A condition of done that can be CHECKED.

    Prose does not qualify. "Tests pass" is a fact; "the code is clean" is not, and a criterion
    judged by the model hands the decision about done back to the model.
    """

    name: str  # how it appears in the report
    command: str  # what runs; empty means there is nothing to run (unavailable)
    exit_code: int = 0  # what counts as met
    timeout_s: float = 300.0


@dataclass(frozen=True)
class DoneSet:
    """The definition of done for a workspace.

    Protected are the paths that ARE the measurement (tests, typically). Without them the rest is
    theatre: an agent that cannot leave the loop finds that the shortest way out is to weaken the
    thing measuring it. It is not a prohibition (sometimes fixing the test IS the work); it is
    visibility.
    """

    criteria: tuple[Criterion, ...] = ()
    protected: tuple[str, ...] = ()

    def touched_protected(self, written: Iterable[str]) -> list[str]:
        """The written (workspace-relative) paths that match a protected pattern, sorted.

        Uses the product's one glob dialect: two dialects would let a path be "protected" for the
        gate and "not matching" for the confirm-write rules, and nobody could say which is right.
        """
        hits = {p for p in written if any(glob_match(pattern, p) for pattern in self.protected)}
        return sorted(hits)

    @property
    def checkable(self) -> bool:
        return any(c.command.strip() for c in self.criteria)


class CriterionState(StrEnum):
    MET = "met"
    UNMET = "unmet"
    UNAVAILABLE = "unavailable"  # nothing to run, or it could not be run


@dataclass
class Report:
    """What a check found."""

    states: dict[str, CriterionState] = field(default_factory=dict)
    # Protected paths written. Surfaced, never counted as progress in silence.
    touched_protected: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)

    def names(self, state: CriterionState) -> list[str]:
        """The criteria in one state, sorted."""
        return sorted(n for n, s in self.states.items() if s == state)

    def unmet(self) -> list[str]:
        """The criteria that ran and failed, sorted.

        Sorted because the set is compared between cycles and printed to a person, and a set that
        reshuffles is one nobody can diff. Unavailable ones are not here: they never provoke
        re-entry, since insisting on what cannot run only produces another guess.
        """
        return self.names(CriterionState.UNMET)

    def met(self) -> list[str]:
        return self.names(CriterionState.MET)

    @property
    def all_met(self) -> bool:
        """Every criterion that could run passed, and at least one could."""
        return bool(self.met()) and not self.unmet()

    @property
    def any_available(self) -> bool:
        return any(s != CriterionState.UNAVAILABLE for s in self.states.values())

    def __str__(self) -> str:
        if not self.states:
            return "done: no criteria defined"
        unmet, met = self.unmet(), self.met()
        unavailable = self.names(CriterionState.UNAVAILABLE)
        total = len(self.states)
        if unmet:
            head = f"done: {len(unmet)} of {total} criteria unmet"
        elif met:
            head = f"done: all {len(met)} checkable criteria met"
        else:
            head = "done: nothing could be checked"
        lines = [head]
        lines += [f"  unmet: {n}" for n in unmet]
        lines += [f"  met: {n}" for n in met]
        lines += [f"  unavailable (not checked): {n}" for n in unavailable]
        if self.touched_protected:
            lines.append("  protected paths written: " + ", ".join(self.touched_protected))
        return "\n".join(lines)

    def detail(self, max_chars: int = 3000) -> str:
        """The report plus the tail of each unmet criterion's output, for the model.

        The tail, because pytest and compilers put the summary last, and a cap, because a
        re-entry message that floods the window pushes out the code it is about.
        """
        parts = [str(self)]
        unmet = self.unmet()
        share = max(400, max_chars // max(1, len(unmet)))
        for name in unmet:
            out = self.outputs.get(name, "").strip()
            if len(out) > share:
                out = "[... cut ...]\n" + out[-share:]
            parts.append(f"--- output of `{name}` ---\n{out}")
        return "\n".join(parts)


def check(done_set: DoneSet, run: RunCommand, timeout: float | None = None) -> Report:
    """Run every criterion and report the states.

    A criterion with an empty command is unavailable: there is nothing to run. A criterion that
    could not be started at all (the runner raised, its program or module is missing) is
    unavailable too, with the reason as its output: a check that could not run is never "passed" and never "unmet". A timeout is unmet:
    a suite that now hangs is a failure the model caused and must hear about. `run` is injected
    so the gate stays testable and every criterion still goes through the sandbox.
    """
    report = Report()
    for c in done_set.criteria:
        if not c.command.strip():
            report.states[c.name] = CriterionState.UNAVAILABLE
            report.outputs[c.name] = "no command: nothing to run"
            continue
        limit = c.timeout_s if timeout is None else min(c.timeout_s, timeout)
        try:
            code, output = run(c.command, limit)
        except Exception as exc:  # noqa: BLE001 - any failure to start is "could not check"
            report.states[c.name] = CriterionState.UNAVAILABLE
            report.outputs[c.name] = f"could not run `{c.command}`: {exc}"
            continue
        if code is None:
            report.states[c.name] = CriterionState.UNMET
            report.outputs[c.name] = f"{output}\n[timed out after {limit:g}s]".lstrip()
            continue
        cause = None if code == c.exit_code else cannot_run(c.command, code, output)
        if cause:
            # Issue 33: "No module named pytest" was counted "unmet, 0 errors" every turn: the
            # model was sent back to fix a suite that never ran. Not run is unavailable.
            report.states[c.name] = CriterionState.UNAVAILABLE
            report.outputs[c.name] = f"cannot run: {cause}\n{output}"
            continue
        report.states[c.name] = CriterionState.MET if code == c.exit_code else CriterionState.UNMET
        report.outputs[c.name] = output
    return report


def progressed(before: Iterable[str], after: Iterable[str]) -> bool:
    """Whether the unmet set shrank strictly.

    The exit condition is progress, not "everything is met": a loop that cannot exit until the
    tests pass makes weakening the test the shortest way out. A set that GROWS, or that swaps one
    failure for another, is not movement: {a} -> {b} fixed a and broke b.
    """
    b, a = set(before), set(after)
    return a < b


class Verification(StrEnum):
    """The seal the client shows. A verify command is a DoneSet of one; this names its outcome."""

    CLEAN = "clean"  # nothing changed; nothing to check
    PASSED = "passed"  # ran after the last edit, met
    FAILED = "failed"  # ran after the last edit, unmet
    STALE = "stale"  # a write happened after the check
    UNAVAILABLE = "unavailable"  # changed, and no command is known


def is_stale(checked_at_seq: int | None, current_seq: int) -> bool:
    """A write happened after the check: compare write COUNTS, never clocks.

    A clock would put a value that varies per run into something a person compares between turns,
    and a set of written paths cannot see a file rewritten after the check, which is the exact
    case being caught. No check at all is stale once anything was written.
    """
    if checked_at_seq is None:
        return current_seq > 0
    return current_seq > checked_at_seq


def verification_of(report: Report | None, changed: bool, stale: bool) -> Verification:
    """Collapse a report into the seal.

    `stale` is the boolean that keeps "passed" honest: without it "passed" would mean "the check
    exited zero at some point", true of a session that ran the suite and then edited everything.
    """
    if not changed:
        return Verification.CLEAN
    if report is None:
        # Criteria exist but never ran after the change (interrupted turn): stale, not unavailable.
        return Verification.STALE if stale else Verification.UNAVAILABLE
    if not report.any_available:
        return Verification.UNAVAILABLE
    if stale:
        return Verification.STALE
    return Verification.FAILED if report.unmet() else Verification.PASSED


def done_set_from_config(criteria: Iterable[object], protected: Iterable[str]) -> DoneSet:
    """Build a DoneSet from config objects (CriterionConfig: name, command, exit_code, timeout_s)."""
    return DoneSet(
        criteria=tuple(
            Criterion(
                name=str(getattr(c, "name", "")),
                command=getattr(c, "command", "") or "",
                exit_code=getattr(c, "exit_code", 0),
                timeout_s=float(getattr(c, "timeout_s", 300.0)),
            )
            for c in criteria
        ),
        protected=tuple(protected),
    )
