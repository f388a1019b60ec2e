"""One verdict of the gate: the check, reused when nothing changed since the last one, and
decided by the ORIGINAL measurement whenever a protected file was edited.

One function because three call sites had drifted apart (issue 22): the check after an answer
compared a green result with the original tests, the re-check after a rollback and the polish
re-check did not. A model that rewrote the test to `assert True` and said "Fixed." twice got a
rollback that restored nothing, then a re-check that skipped the originals, and the seal said
"passed" with calc.py never fixed. Every verdict is now the same kind, wherever it is asked for.

Reuse is the gate's own rule that repeated claims do not buy test runs: with nothing written and
no command run since the last verdict, the workspace is the one it measured, and so is the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..adapters.base import RunCommand
from ..hooks import TurnContext
from .criteria import DoneSet, Report, check
from .protected import protected_state
from .seal import SealState

#: (context, the check's report) -> (the verdict by the originals, measured by the originals?)
OriginalsCheck = Callable[[TurnContext, Report], "tuple[Report, bool]"]


@dataclass(frozen=True)
class Verdict:
    report: Report
    reused: bool  # nothing changed since the last verdict: its answer, no new run
    # The state was measured by the original protected files (none edited, or the re-run with
    # the originals passed). Only such a state may become the near-green checkpoint.
    by_originals: bool
    errors: list[str] = field(default_factory=list)  # parsed from the report (the hook's adapter)


def take_verdict(
    ctx: TurnContext,
    done: DoneSet,
    run: RunCommand,
    seal: SealState,
    originals: OriginalsCheck,
    *,
    fresh: bool,
    known: tuple[Report, bool] | None = None,
    starting: Callable[[], None] | None = None,
) -> Verdict:
    """The verdict on the workspace as it is, recorded in `seal`. `fresh` forces a run (the
    precheck, where the person may have edited between turns; after autofix or a rollback, which
    change files without moving the write count). `known`: the verdict remembered for this very
    tree (memory.py, by its fingerprint), taken instead of a run. `starting`: called just before
    a run, so the person sees that one started (the CheckStarted event)."""
    seq = seal.seq(ctx)
    last = seal.report
    reused = not (fresh or seal.ran_command) and last is not None and seal.checked_seq == seq
    if reused and last is not None:
        report = Report(dict(last.states), [], dict(last.outputs))
        by_originals = seal.by_originals
    elif known is not None:
        reused = True
        report = Report(dict(known[0].states), [], dict(known[0].outputs))
        by_originals = known[1]
    else:
        if starting is not None:
            starting()
        report, by_originals = originals(ctx, check(done, run))
    report.touched_protected = sorted(seal.touched)
    seal.record(report, seq, by_originals)
    if done.protected:
        # What the check (or the rollback before it) did to protected files is not the model's
        # doing; the next command is compared with this state.
        seal.protected = protected_state(ctx.workspace, done)
    return Verdict(report, reused, by_originals)
