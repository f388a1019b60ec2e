"""The help screen (F1, `?` on an empty prompt, the palette's "Keys"): the app's own keys.

Textual's "Keys" panel lists the focused widget's bindings, and the prompt has focus almost
always, so a person asking for help got the text area's cursor-movement list and nothing about
approvals, `!cmd`, steering or Esc Esc. This screen is what they need instead; Esc closes it.

Why `?` only on an empty prompt: the prompt has focus nearly all the time, and a `?` typed into a
question must stay a character. F1 always opens help; the screen says so.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

#: (section, [(keys, what they do)]). Each app binding's key is listed here (a test holds the
#: app's BINDINGS to it), so the screen cannot silently fall behind the keys.
SECTIONS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "Prompt",
        [
            ("Enter", "send"),
            ("Shift+Enter, Ctrl+J", "new line"),
            ("Up / Down", "earlier prompts (at the first / last line); kept per workspace"),
            ("!cmd", "run cmd yourself; the model sees its output"),
            ("typing during a turn", "steers: sent to the model at its next round"),
            ("?", "this help, on an empty prompt (elsewhere ? is a character; F1 always works)"),
        ],
    ),
    (
        "Anywhere",
        [
            ("F1", "this help"),
            ("Esc Esc", "interrupt the turn (two presses within a second)"),
            ("", "between turns, on an empty prompt: rewind to an earlier turn (or forward)"),
            ("Ctrl+C", "copy the selected text; with nothing selected, interrupt the turn"),
            ("PgUp / PgDn", "scroll the chat; the prompt keeps focus"),
            ("", "scrolled up, the chat stays put; at the bottom (or on send) it follows"),
            ("F2", "planner: the whole plan, each step's files and evidence"),
            ("F3", "show or hide the model's reasoning"),
            ("F4", "stop thinking: end the model's reasoning now (it answers without it)"),
            ("Ctrl+P", "palette: rewind, compact, network, discussion mode, theme"),
            ("Ctrl+Q", "quit (stops the session and the server the app started)"),
            ("", "during a turn, from any dialog too, it asks: Ctrl+Q again or y quits"),
        ],
    ),
    (
        "Approval dialog",
        [
            ("y", "approve once"),
            ("1-5", "choose the scope a, A and N are for (listed narrowest first)"),
            ("a", "approve for this session, the chosen scope; a again confirms"),
            ("A", "always in this workspace (a lasting rule); A again confirms"),
            ("N", "never in this workspace (a lasting rule); N again confirms"),
            ("n", "deny; type a reason, then Enter"),
            ("Esc", "deny and stop the turn"),
            ("Up / Down, PgUp / PgDn", "scroll a long diff"),
            ("", "a key answers only when pressed alone (no typing just before or after);"),
            ("", "typing goes to the prompt; a countdown shows the auto-deny"),
        ],
    ),
    (
        "Rewind (Esc Esc between turns, on an empty prompt; or Ctrl+P)",
        [
            ("Up / Down, Enter", "choose a turn; Enter asks what goes back to just before it"),
            ("b", "code and conversation"),
            ("c", "code only (files, commands' changes too)"),
            ("v", "conversation only (the model's history; the files stay)"),
            ("f", "on the list's last row, forward: undo the last rewind"),
            ("k", "a file changed outside cerveau since then: keep it as you have it"),
            ("o", "overwrite it too; o again, alone, confirms"),
            ("Esc", "nothing"),
        ],
    ),
]


def help_content(sections: list[tuple[str, list[tuple[str, str]]]] = SECTIONS) -> Content:
    """The whole help as one text (what a test or a plain-text dump reads)."""
    parts: list[tuple[str, str] | str] = []
    for n, (title, rows) in enumerate(sections):
        parts.append((("\n" if n else "") + title + "\n", "bold"))
        for keys, meaning in rows:
            parts.append((f"  {keys:<24}", "bold"))
            parts.append(meaning + "\n")
    return Content.assemble(*parts).rstrip()


class HelpScreen(ModalScreen[None]):
    CSS_PATH = Path(__file__).with_suffix(".tcss")
    AUTO_FOCUS = "#help-body"  # so Up/Down/PgUp scroll it on a short window
    BINDINGS = [
        Binding("escape,f1,q", "close", "Close", id="help.close"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Static(
                Content.assemble(
                    ("Keys", "bold"), ("   Esc closes · ↑ ↓ PgUp PgDn scroll", "$text-muted")
                ),
                id="help-title",
            )
            # One row per key, two columns: a meaning that wraps stays beside its key.
            with VerticalScroll(id="help-body"):
                for title, rows in SECTIONS:
                    yield Static(title, classes="section", markup=False)
                    for keys, meaning in rows:
                        with Horizontal(classes="row"):
                            yield Static(keys, classes="keys", markup=False)
                            yield Static(meaning, classes="meaning", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)
