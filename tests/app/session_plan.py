"""The session's part of the plan views, for apps with no engine (viewer_app).

In the product the plan ledger (plan/state.py) follows the bus and the loop's worker sends its
reconciled report as `plan_report` after each round, at a turn's end and after a rewind; the
PlanFeed renders only that. Tests that feed raw plan events through the bus get the same here:
the ledger, and a publish after each event that can change the report. Subscribed after the
app's bridge, so the report arrives after the event that changed it, as it does live. It runs on
the emitting thread (the test's); the real session's runs on the worker (test_plan_ledger_ui.py).
"""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.bus import Emitter
from cerveau_tui.plan.state import PlanState
from cerveau_tui.protocol import Event

#: What the session publishes after: the plan's events, a write, a turn's end, a rewind, a rollback.
CHANGES = frozenset(
    {
        "plan_committed",
        "plan_updated",
        "checkpoint",
        "tool_result",
        "turn_ended",
        "rewound",
        "rollback",
    }
)


class SessionPlan:
    def __init__(self, bus: Emitter, workspace: Path) -> None:
        self.bus = bus
        self.ledger = PlanState(workspace=workspace)
        bus.subscribe(self)

    def __call__(self, event: Event) -> None:
        self.ledger.apply(event)
        if event.type in CHANGES:
            self.ledger.publish(self.bus)
