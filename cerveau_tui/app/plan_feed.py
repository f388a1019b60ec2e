"""What the plan views are fed: the plan-relevant events this app saw, and the one report built
from them that the strip and the planner both show (plan_model.py says why it is one)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.dom import DOMNode

from ..plan.models import PlanReport
from ..protocol import Event, EventType
from ..workspace.fingerprint import Fingerprinter
from .plan_model import build_report, make_fingerprinter
from .widgets.plan_strip import PlanStrip
from .widgets.planner import PlannerPanel


class PlanFeed:
    def __init__(self, root: Callable[[], DOMNode], workspace: Path) -> None:
        self._root = root  # the main screen, where the strip and the planner live
        self.workspace = workspace
        self.events: list[Event] = []
        self.report: PlanReport | None = None
        self._fingerprinter: Fingerprinter | None = None

    def record(self, event: Event) -> None:
        # Keep what the report needs, not the tool outputs: 500 turns of logs would stay alive here.
        if event.type == EventType.TOOL_RESULT and "output" in event.payload:
            event = event.model_copy(
                update={"payload": {k: v for k, v in event.payload.items() if k != "output"}}
            )
        self.events.append(event)

    def clear(self) -> None:
        """Another session's plan follows (the session picker): this one's events go."""
        self.events.clear()
        self.report = None

    def refresh(self) -> None:
        if self._fingerprinter is None:
            self._fingerprinter = make_fingerprinter(self.workspace)
        self.report = build_report(self.events, self.workspace, self._fingerprinter)
        root = self._root()
        root.query_one(PlanStrip).show(self.report)
        root.query_one(PlannerPanel).show(self.report)
