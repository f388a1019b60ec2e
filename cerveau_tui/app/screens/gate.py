"""The done-check question, asked once per workspace: the stack's usual check was detected and
no `[done]` criteria or gate are written, so the model's "done" would be taken on its word.

`y` uses the detected check (`[done] gate = "auto"`), `n` never for this workspace (`"off"`);
both are saved in `.cerveau/config.toml` and can be changed from the palette, so each asks for
its key again, alone (armed.py `confirmed`): the `n` in "fix the failing test" once switched the
check off and saved that. Esc decides nothing: asked again at the next start. A key answers only
when pressed on its own, like every dialog (armed.py); typing goes to the prompt. Each answer is
a line in the chat (`say`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from .armed import QUIET_S, ArmedQuestion, KeySink, Say

#: The chat line each answer leaves, and its level.
#: Said before the session saves it (a failed save reports itself), so it says what was chosen.
SAID = {
    "auto": (
        "you chose {command} as the done check for this workspace (Ctrl+P changes it)",
        "info",
    ),
    "off": ("you chose no done check for this workspace (Ctrl+P changes it)", "warning"),
}


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
        *,
        say: Say | None = None,
    ) -> None:
        super().__init__(clock, sink, quiet_s, say=say, id="gate")
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
            " use it as the done check (saved in .cerveau/config.toml; then y again)\n",
            ("n", "bold $text-accent"),
            " not for this workspace (then n again)   ",
            ("Esc", "bold $text-accent"),
            " ask me later",
        )

    def action_answer(self, value: str) -> None:
        if not self.armed:
            return
        if value and not self.confirmed(value, self._confirm_content(value)):
            return
        if value and self.say is not None:
            text, level = SAID[value]
            self.say(text.format(command=self.command), level)
        self.answer(value or None)

    def _confirm_content(self, value: str) -> Content:
        key = self._answering or ("y" if value == "auto" else "n")
        what = (
            f"use {self.command} as the done check for this workspace"
            if value == "auto"
            else "no done check for this workspace"
        )
        return Content.assemble(
            (key, "bold $text-accent"),
            f" again, alone: {what} (saved)\n",
            ("any other key", "bold $text-accent"),
            " back",
        )
