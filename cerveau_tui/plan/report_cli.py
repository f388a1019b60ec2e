"""`cerveau report`: the plan report of a stored session, for a person or as JSON: the plan ledger
(plan/state.py) folded from the session's log and reconciled with the disk, exactly as the
session served it to the model and the views."""

from __future__ import annotations

import json
from pathlib import Path

from .persist import SessionNotFound, list_sessions, load_events
from .render import render_text
from .state import PlanState


def report_command(workspace: Path, session: str | None, as_json: bool) -> tuple[int, str]:
    """`cerveau report`: (exit code, text to print)."""
    workspace = Path(workspace)
    try:
        events = load_events(workspace, session)
    except (SessionNotFound, ValueError) as exc:
        return 1, str(exc)
    sid = session or (events[0].session_id if events else (list_sessions(workspace) or ["?"])[-1])
    report = PlanState(events, workspace=workspace).reconciled()
    if as_json:
        return 0, json.dumps({"session": sid, **report.to_json()}, indent=2)
    return 0, render_text(report, sid)
