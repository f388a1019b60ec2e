"""The done-check question, asked once per workspace: the stack's usual check was detected and
no `[done]` criteria or gate are written, so the model's "done" would be taken on its word.

`y` uses the detected check (`[done] gate = "auto"`), `n` never for this workspace (`"off"`);
both are saved in `.cerveau/config.toml` and can be changed from the palette. Esc decides nothing:
asked again at the next start. It arms like every dialog (armed.py): a key typed as it appears
goes to the prompt, not to the question.
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


class GateScreen(ArmedQuestion[str | None]):
    """Dismissed with "auto", "off", or None (not now)."""

    CSS_PATH = Path(__file__).with_suffix(".tcss")
    BINDINGS = [
        Binding("y", "answer('auto')", "Use it", id="gate.use"),
        Binding("n", "answer('off')", "Not for this workspace", id="gate.off"),
        Binding("escape", "answer('')", "Ask me later", id="gate.later"),
    ]

    def __init__(
        self,
        command: str,
        clock: Callable[[], float],
        sink: KeySink | None = None,
        quiet_s: float = QUIET_S,
    ) -> None:
        super().__init__(clock, sink, quiet_s, id="gate")
        self.command = command

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(
                Content.assemble(
                    ("Check the model's work with this workspace's tests?", "bold $text-accent"),
                ),
                id="head",
            )
            yield Static(Content(self.command), id="items")
            yield Static(
                Content(
                    "Without a check, a model that says it is done is taken at its word. With it, "
                    "the check runs in the sandbox when the model says it is done, and a red "
                    "result sends it back to work."
                ),
                id="why",
            )
            yield Static(id="keys")

    def keys_content(self) -> Content:
        return Content.assemble(
            ("y", "bold $text-accent"),
            " use it as the done check (saved in .cerveau/config.toml)\n",
            ("n", "bold $text-accent"),
            " not for this workspace   ",
            ("Esc", "bold $text-accent"),
            " ask me later",
        )

    def action_answer(self, value: str) -> None:
        self.answer(value or None)
