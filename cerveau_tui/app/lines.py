"""The chat line for an event that is not a widget of its own: (text, level), or None to say
nothing. Events with a payload model get a function of the model; the rest (no model in
protocol.py yet) are read as their dict in `describe`, the one place the app still does so."""

from __future__ import annotations

from typing import Any

from ..protocol import TURN_INTERRUPTED, TURN_STOPPED, EventType, TurnEnded

_WARNINGS = {"drift", "touched_protected", "escalation", "parked", "rollback"}

Line = tuple[str, str]


def turn_ended_line(p: TurnEnded, said: str = "") -> Line:
    """`said`: the error already on screen. Each error is shown once: an HTTP 500 read twice, as
    "error: ..." and again as "turn ended: error — ..." with the same text, looked like two."""
    level = "warning" if p.reason in (TURN_INTERRUPTED, TURN_STOPPED) else "error"
    if p.message and p.message == said:
        return f"turn ended: {p.reason} (the error above)", level
    return f"turn ended: {p.reason}" + (f" — {p.message}" if p.message else ""), level


def describe(event_type: str, p: dict[str, Any]) -> Line | None:
    if event_type == EventType.NOTICE:
        return str(p.get("message") or p.get("text") or ""), str(p.get("level") or "info")
    if event_type == EventType.DRIFT:
        step = p.get("step_id") or p.get("step") or "?"
        return f"drift: {p.get('path', '')} is outside step {step}'s declared files", "warning"
    if event_type == EventType.PLAN_COMMITTED:
        steps = p.get("steps") or []
        src = " (translated from a plan written to a file)" if p.get("source") == "file" else ""
        return f"plan committed: {len(steps)} steps{src}", "info"
    if event_type == EventType.VERIFICATION:
        state = str(p.get("state") or "")
        if state in ("", "clean"):
            return None  # nothing changed, nothing to say
        unmet = ", ".join(str(u) for u in p.get("unmet") or [])
        level = {"passed": "success", "failed": "error"}.get(state, "warning")
        return f"verification: {state}" + (f" (unmet: {unmet})" if unmet else ""), level
    if event_type == EventType.UNDO:
        restored = ", ".join(p.get("restored") or []) or "nothing"
        lost = p.get("not_restorable") or []
        extra = (
            f"; NOT restorable (changed by a command or outside): {', '.join(lost)}" if lost else ""
        )
        return f"undo: restored {restored}{extra}", "warning" if lost else "info"
    if event_type == EventType.DELEGATED:
        if p.get("state") == "started":
            return f"explore: {p.get('task', '')}", "info"
        read = ", ".join(p.get("read") or []) or "nothing"
        return f"explore finished ({p.get('reason', '')}): read {read}", "info"
    if event_type in _WARNINGS:
        detail = p.get("text") or p.get("message") or p.get("reason") or p.get("path") or ""
        return f"{event_type.replace('_', ' ')}: {detail}".rstrip(": "), "warning"
    return None
