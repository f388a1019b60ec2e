"""Rewind, on screen: the list of turns (Esc Esc on an empty prompt, or the palette), then the
question of what goes back (the code, the conversation, or both).

The list is a plain choice of WHICH point (Enter on a turn decides nothing yet; a printable key
closes it and goes to the prompt, so typing is never lost). What goes back is decided in an armed
dialog (armed.py): `b` both, `c` the code only, `v` the conversation only, Esc nothing (`f`
for the forward row: undo the last rewind); a key
answers only when pressed on its own, so prose typed into it never rewinds anything. When files
were changed outside the harness since that point (the person's editor, say), the dialog names
them and asks again before any code goes back: `k` keep them as they are now (the rest goes back),
`o` overwrite them too (`o` again, alone, confirms: it is the one answer that can lose a person's
work). Nothing is overwritten without that second `o`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from .armed import QUIET_S, TICK_S, ArmedModal, KeySink, Say

#: What the dialog can put back, by its key's action ("forward" undoes the last rewind).
MODES = ("both", "code", "conversation", "forward")
#: What the person chose, said above the question that follows it.
CHOSEN = {
    "both": "code and conversation",
    "code": "code only",
    "forward": "forward",
}
#: Files named in the dialog before "and N more".
NAMED = 8
#: A turn whose conversation was rewound away (its code can still come back).
UNDONE = "↶"


@dataclass(frozen=True)
class TurnRow:
    """One line of the list: a checkpoint taken just before turn `number` started, or (`point`
    set) just before one of the person's `!cmd`s, which follows turn `number` (0: none yet)."""

    number: int
    task: str  # the task's first line (a command's: `!cmd`)
    at: str  # when the turn started, HH:MM
    files_changed: int  # by that turn (its tools and its commands), or by that `!cmd`
    added: int = 0  # lines
    removed: int = 0
    undone: bool = False  # the conversation was rewound to before it (a forward brings it back)
    point: str = ""  # a `!cmd`'s restore point (Rewinder.rewind_to_point); "" for a turn
    label: str = ""  # the number column: "3", or "3.1" for the first `!cmd` after turn 3

    @property
    def command(self) -> bool:
        return bool(self.point)

    def what(self) -> str:
        return f"your command {self.label}" if self.command else f"turn {self.number}"


@dataclass(frozen=True)
class ForwardRow:
    """The last rewind, which can be undone: back to how it was just before it."""

    to_turn: int  # the rewind went back to just before this turn (0: not known, a resume)
    at: str  # when the rewind was done ("" when not known)

    def what(self) -> str:
        return f"the rewind to turn {self.to_turn}" if self.to_turn else "the last rewind"


@dataclass(frozen=True)
class RewindPreview:
    """What rewinding to a point would do, asked of the session before the dialog opens."""

    target: TurnRow | ForwardRow
    files: int = 0  # files the code rewind puts back (restored, removed, re-created)
    turns_dropped: int = 0  # turns the conversation rewind cuts from the history
    conflicts: list[str] = field(default_factory=list)  # changed outside the harness since
    changes: list[str] = field(default_factory=list)  # the files the code rewind touches


@dataclass(frozen=True)
class RewindChoice:
    target: TurnRow | ForwardRow
    mode: str  # one of MODES
    overwrite: bool = False  # the files changed outside the harness are overwritten too
    keep: bool = False  # ... or left as they are now (the rest goes back)


def row_text(row: TurnRow | ForwardRow, task_width: int) -> Content:
    if isinstance(row, ForwardRow):
        return Content.assemble(
            ("  ↷ ", "bold $text-accent"),
            (f"forward: undo {row.what()}", "bold"),
            (f"  (as it was at {row.at})" if row.at else "", "$text-muted"),
        )
    task = _fit(row.task, task_width)
    files = f"{row.files_changed} file{'' if row.files_changed == 1 else 's'}"
    return Content.assemble(
        (UNDONE if row.undone else " ", "$text-warning"),
        (f"{row.label or row.number:>3}  ", "$text-muted" if row.command else "bold"),
        (f"{task:<{task_width}}", "$text-muted" if row.undone else ""),
        (f"  {row.at:>5}  ", "$text-muted"),
        (f"{files:>8}  ", ""),
        (f"+{row.added}", "$text-success"),
        " ",
        (f"-{row.removed}", "$text-error"),
    )


def task_width(screen_width: int) -> int:
    """The task column: what the dialog (rewind.tcss: 90%, at most 112, its border and padding,
    the list's) leaves after the number, time, files and +/- columns (34 cells)."""
    inner = min(screen_width * 9 // 10, 112) - 10
    return max(10, inner - 35)


def _fit(text: str, width: int) -> str:
    line = " ".join(str(text).splitlines()[0].split()) if str(text).strip() else "(no task)"
    return line if len(line) <= width else line[: max(1, width - 1)] + "…"


class RewindListScreen(ModalScreen[TurnRow | ForwardRow | None]):
    """The turns, oldest first, the newest selected; Enter picks one, Esc closes."""

    CSS_PATH = Path(__file__).with_suffix(".tcss")
    BINDINGS = [Binding("escape", "close", "Close", id="rewind.close")]

    def __init__(self, rows: list[TurnRow | ForwardRow], sink: KeySink | None = None) -> None:
        super().__init__()  # no id: a list re-opened while the last one is leaving must not clash
        self.rows = list(rows)
        self._sink = sink

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            undone = any(isinstance(r, TurnRow) and r.undone for r in self.rows)
            cmds = any(isinstance(r, TurnRow) and r.command for r in self.rows)
            yield Static(
                Content.assemble(
                    (
                        "Rewind to just before a turn" + (" or a !command" if cmds else ""),
                        "bold $text-accent",
                    ),
                    "\n",
                    ("↑ ↓ choose · Enter asks what goes back · Esc closes", "$text-muted"),
                    (f"\n{UNDONE} rewound away: its code can come back" if undone else "", ""),
                ),
                id="head",
            )
            yield OptionList(id="turns")
            yield Static(id="empty")

    def on_mount(self) -> None:
        turns = self.query_one("#turns", OptionList)
        width = task_width(self.app.size.width)
        turns.add_options([Option(row_text(r, width), id=str(i)) for i, r in enumerate(self.rows)])
        if self.rows:
            # The newest turn (a forward row, when there is one, follows it).
            turns.highlighted = max(
                (i for i, r in enumerate(self.rows) if isinstance(r, TurnRow)), default=0
            )
            turns.focus()
        self.query_one("#empty", Static).update(
            "" if self.rows else Content("No turn yet: nothing to rewind to.")
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.rows[int(event.option.id or 0)])

    def on_key(self, event: events.Key) -> None:
        # Typing was meant for the prompt: the list goes, the key is the prompt's. (The key
        # bubbles here from the list, so it counts as forwarded: keys.is_typing would skip it.)
        char = event.character
        if char is not None and len(char) == 1 and char.isprintable() and event.is_printable:
            event.stop()
            event.prevent_default()
            self.dismiss(None)
            if self._sink is not None:
                self._sink.replay_key(event.key, event.character)

    def action_close(self) -> None:
        self.dismiss(None)


class RewindScreen(ArmedModal[RewindChoice | None]):
    """What goes back, then (only when files changed outside the harness and code goes back)
    whether those files are kept or overwritten. Dismissed with the choice, or None."""

    CSS_PATH = Path(__file__).with_suffix(".tcss")
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS = [
        Binding("b", "mode('both')", "Code and conversation", id="rewind.both"),
        Binding("c", "mode('code')", "Code only", id="rewind.code"),
        Binding("v", "mode('conversation')", "Conversation only", id="rewind.conversation"),
        Binding("f", "mode('forward')", "Forward", id="rewind.forward"),
        Binding("k", "conflicts(False)", "Keep their changes", id="rewind.keep"),
        Binding("o", "conflicts(True)", "Overwrite them", id="rewind.overwrite"),
        Binding("escape", "cancel", "Nothing", id="rewind.cancel"),
    ]

    def __init__(
        self,
        preview: RewindPreview,
        clock: Callable[[], float],
        sink: KeySink | None = None,
        quiet_s: float = QUIET_S,
        *,
        say: Say | None = None,
        mode: str | None = None,
    ) -> None:
        super().__init__(clock, sink, quiet_s, say=say)  # no id: asked again while leaving
        self.preview = preview
        # Chosen; the conflicts question follows when there are any. Given: the rewinder refused
        # an answer already made (a file changed since the preview), so only that is asked.
        self.mode: str | None = mode if preview.conflicts else None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self._head(), id="head")
            yield Static(self._what(), id="what")
            yield Static(self._conflicts(), id="conflicts")
            yield Static(id="keys")

    def on_mount(self) -> None:
        self.query_one("#conflicts").set_class(not self.preview.conflicts, "-none")
        self.show_keys()
        self.set_interval(TICK_S, self.tick_arming)

    # --- what is shown ----------------------------------------------------------------------------
    def _head(self) -> Content:
        target = self.preview.target
        if isinstance(target, ForwardRow):
            return Content.assemble(
                (f"Undo {target.what()}", "bold $text-accent"),
                "\n",
                (f"back to how it was at {target.at}" if target.at else "", "$text-muted"),
            )
        return Content.assemble(
            (f"Rewind to just before {target.what()}", "bold $text-accent"),
            (f"  (started {target.at})", "$text-muted"),
            "\n",
            (_fit(target.task, 90), ""),
        )

    @property
    def forward(self) -> bool:
        return isinstance(self.preview.target, ForwardRow)

    @property
    def code_only(self) -> bool:
        """A turn rewound away: its conversation is gone (a forward brings it back), its code
        can still come back."""
        target = self.preview.target
        return isinstance(target, TurnRow) and target.undone

    def _what(self) -> Content:
        p = self.preview
        if self.forward:
            return Content.assemble(
                "The code and the conversation as they were just before that rewind ",
                ("(what it put back goes again, what it cut comes back)", "$text-muted"),
            )
        files = f"{p.files} file{'' if p.files == 1 else 's'}"
        named = ", ".join(p.changes[:NAMED]) + (", …" if len(p.changes) > NAMED else "")
        n = p.turns_dropped
        dropped = f"{n} turn{'' if n == 1 else 's'} dropped"
        if self.code_only:
            talk = "rewound away already (only a forward brings it back)"
        elif isinstance(p.target, TurnRow) and p.target.command:
            talk = "the history cut to just before the command" + (f" ({dropped})" if n else "")
        else:
            talk = f"the history cut to this turn's start ({dropped})"
        return Content.assemble(
            ("code: ", "bold"),
            f"{files} back as they were: {named}" if p.files else "no file differs",
            "\n",
            ("conversation: ", "bold"),
            talk,
        )

    def _conflicts(self) -> Content:
        named = self.preview.conflicts[:NAMED]
        if not named:
            return Content("")
        more = len(self.preview.conflicts) - len(named)
        return Content.assemble(
            ("Changed outside cerveau since then (your editor?):", "bold $text-warning"),
            "\n",
            "\n".join(f"  {p}" for p in named),
            (f"\n  and {more} more" if more > 0 else "", "$text-muted"),
        )

    def keys_content(self) -> Content:
        if self.asking_conflicts:
            n = len(self.preview.conflicts)
            them = "it" if n == 1 else f"these {n}"
            chosen = CHOSEN.get(self.mode or "", "")
            return Content.assemble(
                (f"{chosen}: what of the files changed outside?\n", "$text-muted"),
                ("k", "bold $text-accent"),
                f" keep {them} as you have {'it' if n == 1 else 'them'} (the rest goes back)\n",
                ("o", "bold $text-accent"),
                f" overwrite {them} too ",
                ("(then o again)   ", "$text-muted"),
                ("Esc", "bold $text-accent"),
                " nothing",
            )
        if self.forward or self.code_only:
            key, what = ("f", "forward: undo the rewind") if self.forward else ("c", "code only")
            return Content.assemble(
                (key, "bold $text-accent"),
                f" {what}   ",
                ("Esc", "bold $text-accent"),
                " nothing",
            )
        return Content.assemble(
            ("b", "bold $text-accent"),
            " code and conversation   ",
            ("c", "bold $text-accent"),
            " code only   ",
            ("v", "bold $text-accent"),
            " conversation only\n",
            ("Esc", "bold $text-accent"),
            " nothing ",
            ("(a rewind can be undone: Esc Esc, forward)", "$text-muted"),
        )

    # --- answers ---------------------------------------------------------------------------------
    @property
    def asking_conflicts(self) -> bool:
        return self.mode is not None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Each question's keys only: a `k` while the mode is asked is typing, for the prompt.
        if action == "mode":
            if self.forward:
                offered = parameters == ("forward",)
            elif self.code_only:
                offered = parameters == ("code",)
            else:
                offered = parameters != ("forward",)
            return offered and not self.asking_conflicts
        if action == "conflicts":
            return self.asking_conflicts
        return True

    def action_mode(self, mode: str) -> None:
        if not self.armed or self.asking_conflicts:
            return
        if mode != "conversation" and self.preview.conflicts:
            self.mode = mode
            self.rearm()  # a new question: nothing typed for the first one answers it
            self.refresh_bindings()
            return
        self.dismiss(RewindChoice(self.preview.target, mode))

    def action_conflicts(self, overwrite: bool) -> None:
        if not self.armed or self.mode is None:
            return
        if overwrite and not self.confirmed("overwrite", self._confirm_overwrite()):
            return
        self.dismiss(
            RewindChoice(self.preview.target, self.mode, overwrite=overwrite, keep=not overwrite)
        )

    def _confirm_overwrite(self) -> Content:
        return Content.assemble(
            (self._answering or "o", "bold $text-accent"),
            " again, alone: overwrite the files changed outside cerveau\n",
            ("any other key", "bold $text-accent"),
            " back",
        )

    def action_cancel(self) -> None:
        if self.armed:
            self.dismiss(None)
