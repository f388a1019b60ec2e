"""Checking against the ORIGINAL measurement when the model edited it.

Writes to protected paths are never forbidden (sometimes fixing the test IS the work), but a
green check produced by an edited test is not progress in silence either. So when the criteria
pass and protected files were written this turn, the same criteria run again in a scratch copy of
the workspace in which the protected files are put back as they were when the turn began. If the
original tests still fail, the model is told exactly that, and the turn is not done.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import protocol as P
from ..adapters.base import RunCommand
from ..hooks import TurnContext
from ..state_home import in_workspace
from ..workspace.io.beneath import atomic_write_beneath, unlink_beneath
from ..workspace.io.copy_beneath import CopyTooLarge, copy_tree_beneath, remove_beneath
from ..workspace.io.openat import UnsafePath
from .criteria import CriterionState, DoneSet, Report, check

SCRATCH = Path(".cerveau") / "verify"
SKIP = (
    ".git",
    ".cerveau",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
)
MAX_COPY_BYTES = 64 * 1024 * 1024  # beyond this, copying per check costs more than it tells


def check_against_originals(
    workspace: Path,
    done: DoneSet,
    run: RunCommand,
    store: Any,
    originals: Mapping[str, str | None],
    touched: list[str],
) -> Report | None:
    """Run the criteria with the touched protected files restored to `originals` (rel -> blob
    digest, None = did not exist). None when it cannot be done (no snapshot, workspace too big)."""
    # A touched path the snapshot does not name did not exist when the turn began: the model
    # created it (a conftest.py that skips everything, a pytest.py that IS the check), and the
    # original measurement is the one without it.
    restore = {rel: originals.get(rel) for rel in touched}
    if not restore or not in_workspace(workspace):
        # With the state outside the workspace (state_home.py) the scratch copy would be either
        # in `.cerveau` (written there after all) or where commands cannot see it: unavailable.
        return None
    # By descriptor, following no link (copy_beneath.py): a path-based copy into a folder a
    # command could reach was redirected into a host folder by a rename mid-copy.
    remove_beneath(workspace, SCRATCH.as_posix())
    try:
        try:
            copy_tree_beneath(workspace, SCRATCH.as_posix(), skip=SKIP, max_bytes=MAX_COPY_BYTES)
        except (OSError, UnsafePath, CopyTooLarge):
            # Too large (MAX_COPY_BYTES), too deep, or not safely made: the original measurement
            # is unavailable, which the caller says; a walk to size it first recursed.
            return None
        for rel, digest in restore.items():
            # The copy keeps the model's links as links: a protected path made a link to a file
            # outside must not be written through (this runs with the person's rights).
            if digest is None:
                unlink_beneath(workspace, f"{SCRATCH.as_posix()}/{rel}")
            else:
                atomic_write_beneath(workspace, f"{SCRATCH.as_posix()}/{rel}", store.get(digest))

        def in_scratch(command: str, timeout: float) -> tuple[int | None, str]:
            return run(f"cd {SCRATCH.as_posix()} && {command}", timeout)

        return check(done, in_scratch)
    finally:
        remove_beneath(workspace, SCRATCH.as_posix())


def with_originals(report: Report, original: Report, touched: list[str]) -> Report:
    """`report` with the criteria the original measurement fails put back to its verdict, and an
    output that says why: the model must learn its edit to the test made the pass, not its fix."""
    merged = Report(dict(report.states), list(report.touched_protected), dict(report.outputs))
    for name in original.unmet():
        merged.states[name] = original.states[name]
        merged.outputs[name] = (
            "Your edits to the protected files ("
            + ", ".join(touched)
            + ") made this pass; with the original versions it still fails:\n"
            + original.outputs.get(name, "")
        )
    return merged


def unavailable(report: Report, touched: list[str]) -> Report:
    """`report` with every met criterion unavailable: green only with edited protected files,
    and the original measurement could not be run. A check that could not run is never passed."""
    out = Report(dict(report.states), list(report.touched_protected), dict(report.outputs))
    for name in report.met():
        out.states[name] = CriterionState.UNAVAILABLE
        out.outputs[name] = (
            "passes only with the edited protected files (" + ", ".join(touched) + "); the "
            "original versions could not be checked"
        )
    return out


def _as_original(store: Any, originals: Mapping[str, str | None], touched: list[str]) -> bool:
    """Every touched protected file is back as it was when the turn began (or gone again)."""
    restore = {rel: originals.get(rel) for rel in touched}
    try:
        return bool(store.snapshot_files(sorted(restore)) == restore)
    except (OSError, UnsafePath):
        return False


def against_originals(
    ctx: TurnContext,
    report: Report,
    done: DoneSet,
    run: RunCommand,
    store: Any,
    originals: Mapping[str, str | None] | None,
    touched: list[str],
) -> tuple[Report, bool]:
    """The verdict on `report` as the ORIGINAL measurement gives it, and whether this state was
    measured by the original protected files (only such a state may be the near-green checkpoint:
    a best state earned with a weakened test is the weakened test, restored).

    Untouched, or put back as they were: the check just ran on the originals. Edited and red: red
    stands, but the score is the edited tests' score. Edited and green: the criteria run again
    with the originals; those they fail are unmet, and the model is told why. Edited, green, and
    no way to run the originals (no snapshot, workspace too large): unavailable, never passed.
    """
    if not touched:
        return report, True
    known = store is not None and originals is not None
    if known and _as_original(store, originals or {}, touched):
        return report, True
    if not report.all_met:
        return report, False
    original = (
        check_against_originals(ctx.workspace, done, run, store, originals or {}, touched)
        if known
        else None
    )
    if original is None:
        text = "the checks pass only with the edited protected files, and the originals could not be checked"
        ctx.emit(P.NoticePayload(text=text))
        return unavailable(report, touched), False
    if original.all_met:
        return report, True
    ctx.emit(
        P.NoticePayload(
            text="the checks pass only with the edited protected files; with the originals "
            + ", ".join(original.unmet())
            + " still fail"
        ),
    )
    return with_originals(report, original, touched), False
