"""The question Ctrl+Q asks while a turn runs: quit, stopping it, or stay.

Found in tmux (issue 33): with a dialog open Ctrl+Q seemed to do nothing. The first press wrote
"Ctrl+Q again to quit" into the chat, which the dialog covered, and the second press counted only
within 5 s, which no text said. The question is now a screen of its own, on top of whatever is
open (an approval included), and it waits: Ctrl+Q again or y quits, Esc or n stays. Quitting
stops the turn, and a dialog still waiting is answered no (stopped) as the app closes.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

QUESTION = "Quit? A turn is running: it is stopped, and a question waiting is answered no."
KEYS = "Ctrl+Q again or y: quit      Esc or n: stay"


class QuitScreen(ModalScreen[bool]):
    """Dismissed with True (quit) or False (stay). The app's own Ctrl+Q binding (a priority
    one) sees this screen on top and quits: the second press needs no binding here."""

    DEFAULT_CSS = """
    QuitScreen { align: center middle; background: $background 60%; }
    QuitScreen #dialog {
        width: 90%; max-width: 72; height: auto; padding: 1 2;
        background: $surface; border: thick $warning;
    }
    QuitScreen #keys { margin: 1 0 0 0; color: $text-muted; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Quit", id="quit.yes"),
        Binding("n,escape", "answer(False)", "Stay", id="quit.no"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Content.styled(QUESTION, "bold $text-warning"), id="question")
            yield Static(Content(KEYS), id="keys")

    def action_answer(self, quit_: bool) -> None:
        self.dismiss(quit_)
