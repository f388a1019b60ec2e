"""The trust dialog: the workspace's `.cerveau/config.toml` asks for less protection than the
person's own settings.

That file sits where the model (and whoever wrote the repository) can write, so config.py does not
apply what it lowers until the person has trusted that exact file (its content hash); until then
the safer values are in force. This screen lists what the file asks for and takes the answer, at
start-up, before the session is built: `t` trust this file (its lowerings then apply; any later
edit asks again; it lasts, so `t` again, alone, confirms it), `i` or Esc ignore them for this
start (the safer values stay; the app says so in the chat). A key answers only when pressed on
its own, like every dialog (armed.py); typing goes to the prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from .armed import QUIET_S, ArmedQuestion, KeySink


class TrustScreen(ArmedQuestion[bool]):
    """Dismissed with True (trust the file) or False (ignore what it lowers)."""

    CSS_PATH = Path(__file__).with_suffix(".tcss")
    BINDINGS = [
        Binding("t", "answer(True)", "Trust this file", id="trust.trust"),
        Binding("i,escape", "answer(False)", "Ignore its lowerings", id="trust.ignore"),
    ]

    def __init__(
        self,
        review: list[str],
        config_path: Path,
        clock: Callable[[], float],
        sink: KeySink | None = None,
        quiet_s: float = QUIET_S,
    ) -> None:
        super().__init__(clock, sink, quiet_s, id="trust")
        self.review = list(review)
        self.config_path = config_path

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(
                Content.assemble(
                    ("This workspace's config asks for less protection", "bold $text-warning"),
                    "\n",
                    (str(self.config_path), "$text-muted"),
                ),
                id="head",
            )
            yield Static(Content("\n".join(f"• {line}" for line in self.review)), id="items")
            yield Static(
                Content(
                    "Not applied: anyone who can write this folder, the model included, can "
                    "write that file. Until you trust it, the safer values are in force."
                ),
                id="why",
            )
            yield Static(id="keys")

    def keys_content(self) -> Content:
        return Content.assemble(
            ("t", "bold $text-accent"),
            " trust this file (apply these; asked again if it changes) ",
            ("(then t again)\n", "$text-muted"),
            ("i", "bold $text-accent"),
            " / ",
            ("Esc", "bold $text-accent"),
            " ignore them (keep the safer values)",
        )

    def action_answer(self, trusted: bool) -> None:
        if not self.armed:
            return
        if trusted and not self.confirmed("trust", self._confirm_content()):
            return
        self.answer(trusted)

    def _confirm_content(self) -> Content:
        return Content.assemble(
            (self._answering or "t", "bold $text-accent"),
            " again, alone: trust this file and apply what it lowers\n",
            ("any other key", "bold $text-accent"),
            " back",
        )
