"""One line under the chat: steps done / total, the current step, and a marker for steps whose
files changed since their checkpoint. Renders the same report object as the planner panel."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from ...plan.models import PlanReport
from ..plan_model import STATUS_ICONS


def strip_content(report: PlanReport | None) -> Content:
    if report is None or not report.steps:
        return Content.assemble(("no plan", "$text-muted"))
    parts: list[tuple[str, str] | str] = [
        ("plan ", "$text-muted"),
        (f"{report.done_count}/{report.total}", "bold"),
        " ",
    ]
    parts.extend(
        (STATUS_ICONS.get(str(s.status), "?"), _icon_style(str(s.status))) for s in report.steps
    )
    cur = report.current
    if cur is not None:
        parts.append(("  ▸ ", "$text-muted"))
        parts.append(f"{cur.id}. {cur.title}")
    changed, missing = report.changed_count, report.missing_count
    if changed:
        parts.append((f"  △ {changed} changed since checkpoint", "$text-warning"))
    if missing:
        parts.append((f"  ✕ {missing} missing", "$text-error"))
    return Content.assemble(*parts)


def _icon_style(status: str) -> str:
    return {
        "done": "$text-success",
        "in_progress": "$text-accent",
        "done_unconfirmed": "$text-warning",
        "changed": "$text-warning",
        "missing": "$text-error",
    }.get(status, "$text-muted")


class PlanStrip(Static):
    DEFAULT_CSS = """
    PlanStrip { height: 1; background: $surface; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__(strip_content(None), id="plan-strip", markup=False)
        self.report: PlanReport | None = None

    def show(self, report: PlanReport | None) -> None:
        self.report = report
        self.update(strip_content(report))
