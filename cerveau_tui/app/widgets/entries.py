"""Small one-line chat entries: what the person typed, and notices (errors, guards, drift...)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage { height: auto; margin: 1 1 0 1; padding: 0 1; background: $boost;
                  border-left: thick $primary; color: $text; }
    UserMessage.-steer { border-left: thick $accent; }
    UserMessage.-exec { border-left: thick $secondary; }
    """

    def __init__(self, text: str, kind: str = "prompt") -> None:
        prefix = {"prompt": "", "steer": "steer: ", "exec": "! "}.get(kind, "")
        super().__init__(Content(prefix + text), markup=False, classes=f"user -{kind}")
        self.text = text


class NoticeLine(Static):
    """A line for the person; `level` is info | warning | error (a CSS class picks the colour)."""

    DEFAULT_CSS = """
    NoticeLine { height: auto; margin: 0 1; padding: 0 1; color: $text-muted; }
    NoticeLine.-warning { color: $text-warning; }
    NoticeLine.-error { color: $text-error; }
    NoticeLine.-success { color: $text-success; }
    """

    def __init__(self, text: str, level: str = "info") -> None:
        super().__init__(Content(text), markup=False, classes=f"notice -{level}")
        self.text = text

    def set_text(self, text: str) -> None:
        self.text = text
        self.update(Content(text))
