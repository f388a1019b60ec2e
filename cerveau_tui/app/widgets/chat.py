"""The conversation: applies engine items in order, one widget per entry, pruned for long sessions.

Only the newest entries are kept mounted (MAX_ENTRIES): every mounted widget costs layout time on
each update, and a 500-turn session with long outputs grew to tens of thousands of widgets in the
apps we studied. The transcript itself lives in the session log, not in the widget tree.
"""

from __future__ import annotations

from typing import Any

from textual.containers import VerticalScroll
from textual.widget import Widget

from ..messages import EngineEvent, StreamText
from .answer import StreamingAnswer
from .entries import NoticeLine, UserMessage
from .reasoning import ReasoningBlock
from .tool_card import ToolCard

MAX_ENTRIES = 200

_WARNINGS = {"guard_tripped", "drift", "touched_protected", "escalation", "parked", "rollback"}


def describe(event_type: str, p: dict[str, Any]) -> tuple[str, str] | None:
    """The chat line for a bus event that is not a widget of its own: (text, level) or None."""
    if event_type == "notice":
        return str(p.get("message") or p.get("text") or ""), str(p.get("level") or "info")
    if event_type == "error":
        retry = " (retrying)" if p.get("retrying") else ""
        return f"error: {p.get('message', '')}{retry}", "error"
    if event_type == "guard_tripped":
        return f"guard {p.get('guard', '')}: {p.get('reason', '')}", "warning"
    if event_type == "drift":
        step = p.get("step_id") or p.get("step") or "?"
        return f"drift: {p.get('path', '')} is outside step {step}'s declared files", "warning"
    if event_type == "plan_committed":
        steps = p.get("steps") or []
        src = " (translated from a plan written to a file)" if p.get("source") == "file" else ""
        return f"plan committed: {len(steps)} steps{src}", "info"
    if event_type == "verification":
        state = str(p.get("state") or "")
        if state in ("", "clean"):
            return None  # nothing changed, nothing to say
        unmet = ", ".join(str(u) for u in p.get("unmet") or [])
        level = {"passed": "success", "failed": "error"}.get(state, "warning")
        return f"verification: {state}" + (f" (unmet: {unmet})" if unmet else ""), level
    if event_type == "undo":
        restored = ", ".join(p.get("restored") or []) or "nothing"
        lost = p.get("not_restorable") or []
        extra = f"; NOT restorable (changed by a command or outside): {', '.join(lost)}" if lost else ""
        return f"undo: restored {restored}{extra}", "warning" if lost else "info"
    if event_type == "delegated":
        if p.get("state") == "started":
            return f"explore: {p.get('task', '')}", "info"
        read = ", ".join(p.get("read") or []) or "nothing"
        return f"explore finished ({p.get('reason', '')}): read {read}", "info"
    if event_type in _WARNINGS:
        detail = p.get("text") or p.get("message") or p.get("reason") or p.get("path") or ""
        return f"{event_type.replace('_', ' ')}: {detail}".rstrip(": "), "warning"
    if event_type == "turn_ended":
        reason = str(p.get("reason", ""))
        if reason == "completed":
            return None
        msg = p.get("message") or ""
        return f"turn ended: {reason}" + (f" — {msg}" if msg else ""), (
            "warning" if reason in ("interrupted", "stopped") else "error"
        )
    return None


class ChatView(VerticalScroll):
    DEFAULT_CSS = """
    ChatView { height: 1fr; layout: stream; background: $background; scrollbar-size-vertical: 1; }
    """

    def __init__(self, show_reasoning: bool = True, max_entries: int = MAX_ENTRIES) -> None:
        super().__init__(id="chat")
        self.show_reasoning = show_reasoning
        self.max_entries = max_entries
        self._answer: StreamingAnswer | None = None
        self._reasoning: ReasoningBlock | None = None
        self.cards: dict[str, ToolCard] = {}

    def on_mount(self) -> None:
        self.anchor()

    # --- entries -----------------------------------------------------------------------------
    def add(self, widget: Widget) -> None:
        self.mount(widget)
        excess = len(self.children) + 1 - self.max_entries
        if excess > 0:
            old = list(self.children[:excess])
            for w in old:
                if isinstance(w, ToolCard):
                    self.cards.pop(w.call_id, None)
            self.remove_children(old)

    def user(self, text: str, kind: str = "prompt") -> None:
        self.settle()
        self.add(UserMessage(text, kind))

    def notice(self, text: str, level: str = "info") -> None:
        self.add(NoticeLine(text, level))

    def settle(self) -> None:
        """The current reply is over (a tool call or the end of the turn came)."""
        if self._answer is not None:
            self._answer.finish()
        self._answer = None
        self._reasoning = None

    # --- engine items ------------------------------------------------------------------------
    def stream(self, item: StreamText) -> None:
        if item.kind == "reasoning":
            if self._reasoning is None:
                self._reasoning = ReasoningBlock(collapsed=False)
                self.add(self._reasoning)
            self._reasoning.write(item.text)
            return
        if self._answer is None:
            self._answer = StreamingAnswer()
            self.add(self._answer)
        self._answer.write(item.text)

    def apply(self, item: EngineEvent) -> None:
        t, p = item.type, item.payload
        if t == "turn_started":
            self.user(str(p.get("input", "")))
        elif t == "steer":
            self.user(str(p.get("text", "")), "steer")
        elif t == "assistant_message":
            self.settle()
        elif t == "tool_call":
            self.settle()
            card = ToolCard(
                str(p.get("call_id", "")),
                str(p.get("name", "?")),
                dict(p.get("arguments") or {}),
                by_person=p.get("via") == "person",
            )
            self.cards[card.call_id] = card
            self.add(card)
        elif t in ("tool_started", "approval_requested", "approval_resolved", "tool_result"):
            self._card_event(t, p)
        else:
            if t == "turn_ended":
                self.settle()
            line = describe(t, p)
            if line and line[0]:
                self.notice(*line)

    def _card_event(self, t: str, p: dict[str, Any]) -> None:
        card = self.cards.get(str(p.get("call_id", "")))
        if card is None:
            return
        if t == "tool_started":
            card.set_status(str(p.get("status") or "running"))
        elif t == "approval_requested":
            card.set_status("waiting")
        elif t == "approval_resolved":
            decision = p.get("decision")
            card.set_status("denied" if decision in ("denied", "stopped") else "running")
        else:
            card.show_result(p)

    def provision(self, text: str) -> None:
        """Start-up progress: one line updated in place, not a scroll of download percentages."""
        line = getattr(self, "_provision_line", None)
        if line is None or not line.is_attached:
            self._provision_line = NoticeLine(text)
            self.add(self._provision_line)
        else:
            line.set_text(text)
