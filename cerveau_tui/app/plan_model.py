"""Where the plan views get their report: ONE `build_report_at` result rendered by both the strip
and the planner, so they cannot disagree (the plan issue's promise)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..protocol import Event

#: Events that can change a report; anything else leaves the last one valid.
PLAN_EVENTS = frozenset(
    {
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


def build_report(events: Iterable[Event], workspace: Path, session: Any = None) -> Any:
    """The session's own report when it has one (it reads the persisted log), else the same
    function over the events this app saw. None when the plan package is absent."""
    if session is not None and hasattr(session, "report"):
        try:
            report = session.report()
            if report is not None:
                return report
        except Exception:
            pass
    try:
        from ..plan.report import build_report_at
    except ImportError:
        return None
    return build_report_at(list(events), workspace)
