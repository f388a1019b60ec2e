"""The planner panel: the whole plan, each step with its status, files, evidence and note.
Toggled by a key; renders the same report object as the plan strip. At most 42% of the width:
at 80 columns a fixed 44 left the chat 36, too narrow for a diff line."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from ...plan.models import PlanReport
from ..plan_model import STATUS_ICONS, STATUS_LABELS
from .plan_strip import _icon_style


def planner_content(report: PlanReport | None) -> Content:
    if report is None or not report.steps:
        return Content.assemble(
            ("No plan yet. The model commits one with commit_plan.", "$text-muted")
        )
    parts: list[tuple[str, str] | str] = [
        (f"Plan (revision {report.revision})", "bold"),
        (f"  {report.done_count}/{report.total} done\n", "$text-muted"),
    ]
    for s in report.steps:
        status = str(s.status)
        parts.append("\n")
        parts.append((f"{STATUS_ICONS.get(status, '?')} ", _icon_style(status)))
        parts.append((f"{s.id}. {s.title}\n", "bold"))
        parts.append((f"   {STATUS_LABELS.get(status, status)}\n", _icon_style(status)))
        if s.files:
            parts.append(("   files: ", "$text-muted"))
            parts.append(", ".join(s.files) + "\n")
        for ev in list(s.evidence)[-3:]:
            parts.append((f"   · {ev}\n", "$text-muted"))
        if s.note:
            parts.append((f"   note: {s.note}\n", "italic"))
    return Content.assemble(*parts).rstrip()


class PlannerPanel(VerticalScroll):
    DEFAULT_CSS = """
    PlannerPanel { dock: right; width: 44; max-width: 42%; background: $surface;
                   border-left: wide $panel; padding: 0 1; display: none; }
    PlannerPanel:focus { border-left: wide $primary; }
    PlannerPanel.-open { display: block; }
    """

    def __init__(self) -> None:
        super().__init__(id="planner")
        self.report: PlanReport | None = None
        self._body = Static(planner_content(None), markup=False)

    def compose(self):  # type: ignore[override]
        yield self._body

    def show(self, report: PlanReport | None) -> None:
        self.report = report
        self._body.update(planner_content(report))
