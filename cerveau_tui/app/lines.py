"""The chat line for an event that is not a widget of its own: (text, level), or None to say
nothing. Events with a payload model get a function of the model; the rest (no model in
protocol.py yet) are read as their dict in `describe`, the one place the app still does so."""

from __future__ import annotations

from typing import Any

from ..done.polish import NO_GATE
from ..protocol import (
    TURN_INTERRUPTED,
    TURN_STOPPED,
    BudgetNotice,
    Compacted,
    EventType,
    PolishPayload,
    ReminderPayload,
    TurnEnded,
)
from ..workspace.undo import describe_undo

_WARNINGS = {"drift", "touched_protected", "escalation", "parked", "rollback"}

Line = tuple[str, str]


def turn_ended_line(p: TurnEnded, said: str = "") -> Line:
    """`said`: the error already on screen. Each error is shown once: an HTTP 500 read twice, as
    "error: ..." and again as "turn ended: error — ..." with the same text, looked like two."""
    level = "warning" if p.reason in (TURN_INTERRUPTED, TURN_STOPPED) else "error"
    if p.message and p.message == said:
        return f"turn ended: {p.reason} (the error above)", level
    return f"turn ended: {p.reason}" + (f" — {p.message}" if p.message else ""), level


def compacted_line(p: Compacted) -> Line:
    """The figures, so a compaction is never silent (peers' users complain of exactly that)."""
    of = f" of {p.n_ctx:,}" if p.n_ctx else ""
    how = {
        "model": "a summary the model wrote",
        "brief": "the resume brief (no model summary)",
        "none": "placeholders for old tool outputs",
    }[p.summary_source]
    parts = [f"{p.dropped_rounds} rounds folded into {how}"] if p.dropped_rounds else [how]
    if p.pruned:
        parts.append(f"{p.pruned} old calls and results cleared")
    by = " (you asked)" if p.reason == "person" else ""
    return (
        f"context compacted{by}: {p.tokens_before:,} → {p.tokens_after:,} tokens{of}; "
        + "; ".join(parts),
        "info",
    )


def budget_line(p: BudgetNotice) -> Line:
    of = f" ({p.context_tokens:,} of {p.n_ctx:,} tokens)" if p.n_ctx else ""
    return f"context {p.percent}% full{of}", "warning" if p.percent >= 90 else "info"


def reminder_line(p: ReminderPayload) -> Line:
    """One line: the model reads the whole text; the person sees that it was told, and by whom."""
    body = [ln for ln in p.text.splitlines()[1:] if ln.strip()]
    first = body[0] if body else ""
    first = first if len(first) <= 100 else first[:99] + "…"
    more = f" (+{len(body) - 1} lines)" if len(body) > 1 else ""
    who = ", ".join(p.sources) or "harness"
    return f"reminder to the model ({who}): {first}{more}", "info"


def polish_line(p: PolishPayload) -> Line | None:
    if p.result == "skipped" and p.reason == NO_GATE:  # no gate, no polish: every turn
        return None
    text = {
        "kept": "polish kept: the gate stayed green",
        "reverted": "polish reverted: the gate went red, the green result stands",
        "skipped": "polish skipped",
    }[p.result]
    level = "warning" if p.result == "reverted" else "info"
    return text + (f" ({p.reason})" if p.reason else ""), level


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
        lost = [str(x) for x in p.get("not_restorable") or []]
        text = describe_undo(
            [str(x) for x in p.get("restored") or []],
            [str(x) for x in p.get("removed") or []],
            lost,
        )
        return text, "warning" if lost else "info"
    if event_type == EventType.DELEGATED:
        if p.get("state") == "started":
            return f"explore: {p.get('task', '')}", "info"
        read = ", ".join(p.get("read") or []) or "nothing"
        return f"explore finished ({p.get('reason', '')}): read {read}", "info"
    if event_type == EventType.LESSONS:
        n = p.get("count", len(p.get("lessons") or []))
        return f"lessons learnt this turn: {n}", "info"
    if event_type == EventType.SESSION_RESUMED:
        turns = p.get("turns", "?")
        return f"resumed session {p.get('session_id') or p.get('id') or ''}: {turns} turns", "info"
    if event_type in _WARNINGS:
        detail = p.get("text") or p.get("message") or p.get("reason") or p.get("path") or ""
        return f"{event_type.replace('_', ' ')}: {detail}".rstrip(": "), "warning"
    return None
