"""The conversation: one widget per entry, in order, pruned for long sessions.

Only the newest entries are kept mounted (MAX_ENTRIES): every mounted widget costs layout time on
each update, and a 500-turn session with long outputs grew to tens of thousands of widgets in the
apps we studied. The transcript itself lives in the session log, not in the widget tree.

The router (app/routing.py) decides what an event means; this widget only knows how to show a
turn's parts. A tool card is found by its DOM id (`card_id`), so a pruned card is simply gone.
"""

from __future__ import annotations

import re

from textual.containers import VerticalScroll
from textual.css.query import NoMatches, WrongType
from textual.widget import Widget

from ...protocol import ToolCallPayload
from ..messages import StreamText
from .answer import StreamingAnswer
from .entries import NoticeLine, UserMessage
from .reasoning import ReasoningBlock
from .tool_card import ToolCard

MAX_ENTRIES = 200

_NOT_ID = re.compile(r"[^A-Za-z0-9]")


def card_id(call_id: str) -> str:
    """The DOM id of a call's card. A call id is the server's text, and a DOM id allows only
    letters, digits, `-` and `_`: every other character (and `_` itself) is escaped as `_hex_`,
    so two different call ids never share a card."""
    return "call-" + _NOT_ID.sub(lambda m: f"_{ord(m.group()):x}_", call_id)


class ChatView(VerticalScroll):
    DEFAULT_CSS = """
    ChatView { height: 1fr; layout: stream; background: $background; scrollbar-size-vertical: 1; }
    ChatView:focus { scrollbar-color: $primary; background-tint: $foreground 4%; }
    """

    def __init__(self, show_reasoning: bool = True, max_entries: int = MAX_ENTRIES) -> None:
        super().__init__(id="chat")
        self.show_reasoning = show_reasoning
        self.max_entries = max_entries
        self._answer: StreamingAnswer | None = None
        self._reasoning: ReasoningBlock | None = None
        # Call ids a server sent twice: the newer card's DOM id. Empty with llama-server, whose
        # ids are random; a server reusing "call_0" per round must not route round 2's result
        # into round 1's card (nor crash the mount on a duplicate id).
        self._reused: dict[str, str] = {}

    def on_mount(self) -> None:
        # Anchored: new output keeps the view at the bottom until the person scrolls up
        # (PgUp, the wheel); scrolling back to the bottom, or sending, follows again.
        self.anchor()

    def follow(self) -> None:
        """Back to the newest output, and keep following it (the person just sent something)."""
        self.anchor()

    def clear(self) -> None:
        """Empty, for another session's conversation (the palette's session picker)."""
        self.settle()
        self._reused.clear()
        self.remove_children()

    # --- entries -----------------------------------------------------------------------------
    def add(self, widget: Widget) -> None:
        self.mount(widget)
        excess = len(self.children) + 1 - self.max_entries
        if excess > 0:
            self.remove_children(list(self.children[:excess]))

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

    # --- tool cards --------------------------------------------------------------------------
    def tool_call(self, call: ToolCallPayload, seq: int) -> ToolCard:
        self.settle()
        dom_id = card_id(call.call_id)
        if self.card(call.call_id) is not None:
            dom_id = f"{dom_id}--{seq}"  # `--` never occurs in card_id's escaped part
            self._reused[call.call_id] = dom_id
        else:
            self._reused.pop(call.call_id, None)
        card = ToolCard(
            call.call_id, call.name, call.arguments, by_person=call.via == "person", id=dom_id
        )
        self.add(card)
        return card

    def card(self, call_id: str) -> ToolCard | None:
        """The newest card of a call, by DOM id; None when it was pruned (or never shown)."""
        dom_id = self._reused.get(call_id) or card_id(call_id)
        try:
            return self.get_child_by_id(dom_id, ToolCard)
        except (NoMatches, WrongType):
            return None

    def card_status(self, call_id: str, status: str) -> None:
        card = self.card(call_id)
        if card is not None:
            card.set_status(status)

    def provision(self, text: str) -> None:
        """Start-up progress: one line updated in place, not a scroll of download percentages."""
        line = getattr(self, "_provision_line", None)
        if line is None or not line.is_attached:
            self._provision_line = NoticeLine(text)
            self.add(self._provision_line)
        else:
            line.set_text(text)
