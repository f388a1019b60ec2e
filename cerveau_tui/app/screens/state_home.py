"""The read-only workspace dialog: `<workspace>/.cerveau` cannot be written (a read-only mount, a
`chmod -w` checkout, a folder of another user), so the session has nowhere to keep its log, undo
copies and memory. Shown at start-up, before the session is built; it says where the state could
go instead (the user state folder, state_home.py) and offers it: `u` keeps it there for this start
(then `u` again, alone: it decides where the next config is read from), `q` or Esc does not (no
session starts; the chat says how to choose it next time). A key answers only when pressed on its
own, like every dialog (armed.py); typing goes to the prompt.
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


class StateHomeScreen(ArmedQuestion[bool]):
    """Dismissed with True (keep the state in `alternate`) or False (start no session)."""

    CSS_PATH = Path(__file__).with_suffix(".tcss")
    BINDINGS = [
        Binding("u", "answer(True)", "Use the user state folder", id="state_home.use"),
        Binding("q,escape", "answer(False)", "Do not start", id="state_home.refuse"),
    ]

    def __init__(
        self,
        workspace: Path,
        why: str,
        alternate: Path,
        clock: Callable[[], float],
        sink: KeySink | None = None,
        quiet_s: float = QUIET_S,
    ) -> None:
        super().__init__(clock, sink, quiet_s, id="state-home")
        self.workspace = workspace
        self.why = why
        self.alternate = alternate

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(
                Content.assemble(
                    ("This workspace is read-only", "bold $text-warning"),
                    "\n",
                    (f"{self.workspace / '.cerveau'}: {self.why}", "$text-muted"),
                ),
                id="head",
            )
            yield Static(
                Content(
                    "cerveau keeps each session's log, undo copies and memory beside the "
                    "workspace. They can go to your user state folder instead; nothing is then "
                    "written in the workspace by cerveau:\n"
                ).append(Content.styled(str(self.alternate), "bold")),
                id="where",
            )
            yield Static(
                Content(
                    'Next time: cerveau --state-dir user, or state_dir = "auto" in your own '
                    "config (not the workspace's)."
                ),
                id="why",
            )
            yield Static(id="keys")

    def keys_content(self) -> Content:
        return Content.assemble(
            ("u", "bold $text-accent"),
            " keep the state in the user state folder ",
            ("(then u again)\n", "$text-muted"),
            ("q", "bold $text-accent"),
            " / ",
            ("Esc", "bold $text-accent"),
            " do not start a session",
        )

    def action_answer(self, use: bool) -> None:
        if not self.armed:
            return
        if use and not self.confirmed("use", self._confirm_content()):
            return
        self.answer(use)

    def _confirm_content(self) -> Content:
        return Content.assemble(
            (self._answering or "u", "bold $text-accent"),
            " again, alone: keep this workspace's state in ",
            (str(self.alternate), "bold"),
            "\n",
            ("any other key", "bold $text-accent"),
            " back",
        )
