"""What the plan views are fed: the last `plan_report` the session sent, rendered by the strip and
the planner alike (plan_model.py says why it is one report).

Computed nowhere here. The report is the session's plan ledger reconciled with the disk
(plan/state.py), built on the loop's worker thread and sent on the bus; this feed only renders
it. Before, the feed kept its own copy of the plan events and ran `build_report_at` with its own
fingerprinter on the UI thread after every write: a fourth holder of the plan, which disagreed
with the model's guidance after a resume, and file hashing on the thread that draws the screen.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.dom import DOMNode

from ..plan.models import PlanReport
from ..protocol import Event, PlanReported
from .widgets.plan_strip import PlanStrip
from .widgets.planner import PlannerPanel


class PlanFeed:
    def __init__(self, root: Callable[[], DOMNode]) -> None:
        self._root = root  # the main screen, where the strip and the planner live
        self.report: PlanReport | None = None
        self._received: dict[str, object] | None = None

    def record(self, event: Event) -> None:
        if event.type == PlanReported.event_type:
            self._received = dict(event.payload)

    def clear(self) -> None:
        """Another session's plan follows (the session picker): this one's report goes, and
        the views say "no plan" until that session sends its own."""
        self._received = None
        self.report = None
        root = self._root()
        root.query_one(PlanStrip).show(None)
        root.query_one(PlannerPanel).show(None)

    def refresh(self) -> None:
        if self._received is None:
            return
        self.report = PlanReport.from_json(self._received)
        self._received = None
        root = self._root()
        root.query_one(PlanStrip).show(self.report)
        root.query_one(PlannerPanel).show(self.report)
