"""The multi-line prompt: Enter sends, Shift+Enter or Ctrl+J inserts a newline, Up/Down at the
edges walk the history."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea


@dataclass
class PromptHistory:
    entries: list[str]
    limit: int = 500
    _pos: int | None = None  # None: editing a new entry
    _draft: str = ""

    def add(self, text: str) -> None:
        if text and (not self.entries or self.entries[-1] != text):
            self.entries.append(text)
            del self.entries[: -self.limit]
        self._pos = None

    def older(self, current: str) -> str | None:
        if not self.entries:
            return None
        if self._pos is None:
            self._draft, self._pos = current, len(self.entries)
        if self._pos == 0:
            return None
        self._pos -= 1
        return self.entries[self._pos]

    def newer(self) -> str | None:
        if self._pos is None:
            return None
        self._pos += 1
        if self._pos >= len(self.entries):
            self._pos = None
            return self._draft
        return self.entries[self._pos]


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput { height: auto; max-height: 10; min-height: 3; border: tall $panel;
                  background: $surface; }
    PromptInput:focus { border: tall $primary; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self) -> None:
        super().__init__(
            id="prompt",
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder="Ask (Enter sends, Ctrl+J newline). While it works, typing steers. !cmd runs a command.",
        )
        self.past = PromptHistory([])
        self.cursor_blink = False  # a blinking cursor makes every snapshot differ

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text
            if text.strip():
                self.past.add(text)
                self.clear()
                self.post_message(self.Submitted(text))
            return
        if key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "up" and self.cursor_location[0] == 0:
            entry = self.past.older(self.text)
            if entry is not None:
                event.stop()
                event.prevent_default()
                self._replace_all(entry)
            return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            entry = self.past.newer()
            if entry is not None:
                event.stop()
                event.prevent_default()
                self._replace_all(entry)
            return
        await super()._on_key(event)

    def _replace_all(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)
