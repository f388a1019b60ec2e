"""Per-session plan state: the plan events seen so far, and the report folded from them.

The state IS its events (the report is a pure function of them), so the tools, the hook and a
resumed session all agree as long as they see the same events. `apply` is idempotent per event,
so the same object may both subscribe to the bus and be fed directly by whoever emitted.

One per session, made by the composition root (session.py) and handed to the plan tools
(ToolContext.plan) and the PlanHook: if each kept its own, a plan committed from a Markdown file
by the hook would be unknown to update_plan.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from ..protocol import Event, EventType
from .models import PlanReport
from .report import build_report

PLAN_EVENT_TYPES = frozenset(
    {EventType.PLAN_COMMITTED, EventType.PLAN_UPDATED, EventType.CHECKPOINT}
)


class PlanState:
    def __init__(self, events: Iterable[Event] = ()) -> None:
        self.events: list[Event] = []
        self._seen: set[tuple[str, int]] = set()
        self._lock = threading.Lock()
        self._report: PlanReport | None = None
        for ev in events:
            self.apply(ev)

    def __call__(self, event: Event) -> None:
        """Bus subscriber form."""
        self.apply(event)

    def apply(self, event: Event) -> None:
        if event.type not in PLAN_EVENT_TYPES:
            return
        key = (event.session_id, event.seq)
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
            self.events.append(event)
            self._report = None

    def report(self) -> PlanReport:
        with self._lock:
            if self._report is None:
                self._report = build_report(self.events)
            return self._report

    @property
    def revision(self) -> int:
        return self.report().revision

    @property
    def has_plan(self) -> bool:
        return bool(self.report().steps)
