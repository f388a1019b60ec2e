"""Architecture drift: a write outside every file the plan declared.

Flagged, never blocked and never silently accepted: the plan is guidance and the agent may adapt,
but a person reading the session should see where the work left the plan, and the model should be
reminded that the plan can be revised.
"""

from __future__ import annotations

from .models import PlanReport
from .paths import covered_by_any, norm_rel


def drift_for_write(report: PlanReport, rel_path: str) -> str | None:
    """A message naming the current step when `rel_path` is outside all declared files, else None.

    No drift without a plan, or when no step declares any file (nothing to drift from); the
    harness's own folder and the plan's own Markdown files are never drift.
    """
    rel = norm_rel(rel_path)
    if not report.steps or not rel:
        return None
    if rel == ".cerveau" or rel.startswith(".cerveau/") or rel in report.plan_files:
        return None
    declared = [norm_rel(f) for s in report.steps for f in s.files]
    if not declared or covered_by_any(declared, rel):
        return None
    cur = report.current
    if cur is None:
        return f"{rel} was written after every plan step finished; it is outside the plan's declared files"
    where = f"step {cur.id} ({cur.title})"
    owns = f"declares {', '.join(cur.files)}" if cur.files else "declares no files"
    return f"{rel} is outside the plan's declared files; current {where} {owns}"
