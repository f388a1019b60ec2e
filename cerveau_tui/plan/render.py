"""A plain-text rendering of a PlanReport, for `cerveau report` and the headless runner."""

from __future__ import annotations

from .models import PlanReport, StepStatus

LABEL = {
    StepStatus.PENDING: "pending",
    StepStatus.IN_PROGRESS: "in progress",
    StepStatus.DONE: "done",
    StepStatus.DONE_UNCONFIRMED: "done on disk, not confirmed",
    StepStatus.CHANGED: "changed since checkpoint",
    StepStatus.MISSING: "files missing",
}


def render_text(report: PlanReport, session_id: str = "") -> str:
    head = f"session {session_id}: " if session_id else ""
    if report.revision == 0:
        return f"{head}no plan committed"
    if not report.steps:
        return f"{head}plan r{report.revision} has no steps"
    extra = []
    if report.changed_count:
        extra.append(f"{report.changed_count} changed")
    if report.missing_count:
        extra.append(f"{report.missing_count} missing")
    tail = f" ({', '.join(extra)})" if extra else ""
    src = " from a Markdown file" if report.source == "file" else ""
    lines = [f"{head}plan r{report.revision}{src}: {report.done_count}/{report.total} done{tail}"]
    width = max(len(s.id) for s in report.steps)
    for s in report.steps:
        lines.append(f"  {s.id.rjust(width)}. [{LABEL[s.status]}] {s.title}")
        if s.files:
            lines.append(f"  {' ' * width}  files: {', '.join(s.files)}")
        if s.note:
            lines.append(f"  {' ' * width}  note: {s.note}")
        for e in s.evidence[-2:] if s.status not in (StepStatus.PENDING, StepStatus.DONE) else ():
            lines.append(f"  {' ' * width}  - {e}")
    return "\n".join(lines)
