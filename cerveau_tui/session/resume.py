"""Continuing an earlier session: its events read back, its plan carried into this one, and the
log this session appends to.
"""

from __future__ import annotations

from typing import Any

from ..bus import Emitter
from ..config import Settings
from ..protocol import EventType


def load_previous(settings: Settings, resume: str) -> list[Any]:
    """The events of the session to continue ("" = the latest). Read before this session's own
    log exists, so "latest" is the previous one."""
    from ..plan.persist import SessionNotFound, load_events

    try:
        return load_events(settings.workspace, resume or None)
    except SessionNotFound:
        return []


def replay_plan(bus: Emitter, events: list[Any]) -> None:
    """Carry the plan of a previous session into this one (a plan committed in discussion, then
    an autopilot run): its plan events are re-published, so the tools, the hook, the views and
    this session's log all hold the same plan."""
    from ..plan.state import PLAN_EVENT_TYPES

    plan = [e for e in events if e.type in PLAN_EVENT_TYPES]
    for ev in plan:
        bus.emit(ev.type, {**ev.payload, "resumed_from": ev.session_id})
    origin = events[0].session_id if events else "none"
    bus.emit(
        EventType.NOTICE,
        {
            "text": f"continuing from session {origin}: {len(plan)} plan events restored",
            "source": "plan",
        },
    )


def session_log(settings: Settings, bus: Emitter) -> Any:
    from ..plan.persist import SessionLog

    log = SessionLog(settings.workspace, bus.session_id)
    bus.subscribe(log)
    return log
