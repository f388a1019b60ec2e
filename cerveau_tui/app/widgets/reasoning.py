"""Reasoning fragments, dimmed and collapsible, kept apart from the answer."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Collapsible, Static


class ReasoningBlock(Collapsible):
    DEFAULT_CSS = """
    ReasoningBlock { height: auto; border: none; padding: 0; margin: 0 1; background: transparent; }
    ReasoningBlock Static { color: $text-muted; text-style: italic; }
    ReasoningBlock CollapsibleTitle { color: $text-muted; }
    """

    def __init__(self, text: str = "", collapsed: bool = False) -> None:
        self._text = text
        self._body = Static(Content(text), markup=False)
        super().__init__(self._body, title="reasoning", collapsed=collapsed, classes="reasoning")

    def write(self, fragment: str) -> None:
        self._text += fragment
        self._body.update(Content(self._text.strip("\n")))

    @property
    def text(self) -> str:
        return self._text
