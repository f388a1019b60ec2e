"""Where the plan views get their report: ONE `build_report_at` result rendered by both the strip
and the planner, so they cannot disagree (the plan issue's promise)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..plan.models import PlanReport
from ..plan.report import build_report_at
from ..protocol import Event
from ..workspace.fingerprint import Fingerprinter

#: Events that can change a report; anything else leaves the last one valid. "undo" too: it puts
#: files back with no turn around it, and without it the strip kept "1/2 done" while
#: `cerveau report` (the same function over the log) said the step's file was missing.
PLAN_EVENTS = frozenset(
    {
        "undo",
        "plan_committed",
        "plan_updated",
        "checkpoint",
        "drift",
        "tool_result",
        "turn_ended",
        "rollback",
    }
)

STATUS_ICONS = {
    "pending": "○",
    "in_progress": "◐",
    "done": "●",
    "done_unconfirmed": "◍",
    "changed": "△",
    "missing": "✕",
}
STATUS_LABELS = {
    "pending": "pending",
    "in_progress": "in progress",
    "done": "done",
    "done_unconfirmed": "done on disk, not confirmed",
    "changed": "changed since checkpoint",
    "missing": "files missing",
}


def build_report(
    events: Iterable[Event], workspace: Path, fingerprinter: Fingerprinter | None = None
) -> PlanReport:
    """`build_report_at` over the plan-relevant events this app saw (the same events the session
    log holds, filtered), with a warm fingerprinter so only changed files are hashed again: it
    runs on the UI thread after plan events, so it must stay in the low milliseconds."""
    return build_report_at(list(events), workspace, fingerprinter)


def make_fingerprinter(workspace: Path) -> Fingerprinter:
    return Fingerprinter(workspace)
