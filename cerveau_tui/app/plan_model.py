"""What the plan views share: ONE report, rendered by both the strip and the planner, so they
cannot disagree (the plan issue's promise), and the icons and labels they render it with.

The report arrives whole in a `plan_report` event (plan/state.py, `publish`: the session's plan
ledger reconciled with the disk on the loop's worker thread); the views compute nothing."""

from __future__ import annotations

#: Events that carry a new report; anything else leaves the last one valid.
PLAN_EVENTS = frozenset({"plan_report"})

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
