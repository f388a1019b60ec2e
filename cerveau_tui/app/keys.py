"""Keys that must reach the prompt, and the quit that asks once while a turn runs.

Tried as a new user would: Tab moved focus off the prompt (to the chat, then each tool card's
title) and every key typed after it vanished; six Tabs brought the prompt back. In every peer the
input takes typing whatever was clicked or tabbed to. So on the main screen a printable key or a
paste aimed at any other widget is given to the prompt, which takes focus back; keys that move or
act (Tab, arrows, Enter on a card's title) keep their meaning where the focus is.

Ctrl+Q in the middle of a turn quit at once, losing the turn's work in flight: it now asks, on a
screen of its own above any dialog (screens/quit.py), and the question waits for its answer. It
was a chat notice and a second press within 5 s: under a dialog the notice was hidden, and no text
said the 5 s, so Ctrl+Q seemed to do nothing (issue 33).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual import events
from textual.binding import Binding
from textual.screen import Screen

from .runner import SessionRunner
from .screens.quit import QuitScreen
from .widgets.chat import ChatView
from .widgets.prompt import PromptInput

#: Priority: the prompt has focus and would move its cursor; on a dialog they are its own.
SCROLL_BINDINGS = [
    Binding(
        "pageup", "scroll_chat('up')", "Scroll up", id="app.page_up", show=False, priority=True
    ),
    Binding(
        "pagedown",
        "scroll_chat('down')",
        "Scroll down",
        id="app.page_down",
        show=False,
        priority=True,
    ),
]

#: Esc twice within this interrupts the turn.
ESC_ESC_S = 1.0


def is_typing(event: events.Event) -> bool:
    """A key that types a character (not a binding's chord), or a paste."""
    if isinstance(event, events.Paste):
        return True
    if not isinstance(event, events.Key) or event.is_forwarded:
        return False
    char = event.character
    return char is not None and len(char) == 1 and char.isprintable() and event.is_printable


class KeyHost(Protocol):
    """What the keyboard rules need of the app (app.py's CerveauApp)."""

    busy: bool

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    @property
    def screen(self) -> Screen[Any]: ...
    @property
    def prompt(self) -> PromptInput: ...
    @property
    def chat(self) -> ChatView: ...
    def action_interrupt(self) -> None: ...
    def open_rewind(self) -> None: ...
    def push_screen(self, screen: Any, callback: Any = None) -> Any: ...
    async def quit_now(self) -> None: ...
    @property
    def runner(self) -> SessionRunner | None: ...


class Keyboard:
    """The app-wide rules: typing goes to the prompt, Esc Esc interrupts (between turns, on an
    empty prompt, it opens the rewind list), Ctrl+Q asks once."""

    def __init__(self, app: KeyHost, clock: Callable[[], float]) -> None:
        self.app = app
        self.clock = clock
        self._last_escape = -10.0
        self._asking = False  # the quit question is open

    def refocus_prompt(self) -> None:
        """Before a key or paste is dispatched: on the main screen, the prompt takes the focus
        back. Not on a dialog: its keys are its own (its arming replays typing to the prompt)."""
        base = self.app.screen_stack[0]
        if self.app.screen is base and not isinstance(base.focused, PromptInput):
            base.set_focus(self.app.prompt)

    def escape(self) -> None:
        self.refocus_prompt()  # Esc from a card or the chat: back to typing
        now = self.clock()
        if now - self._last_escape <= ESC_ESC_S:
            self._last_escape = -10.0
            app = self.app
            idle = not app.busy and app.screen is app.screen_stack[0]
            if idle and not app.prompt.text.strip():
                app.open_rewind()  # rewind_actions.py: the turns, to go back to one
            else:
                app.action_interrupt()
        else:
            self._last_escape = now

    def stop_thinking(self) -> None:
        """F4 or the palette: end the model's reasoning now (loop/thinking.py); the reasoning
        panel then says how. Between turns there is nothing to stop, and it says so."""
        runner = self.app.runner
        if not self.app.busy or runner is None or runner.session is None:
            self.app.chat.notice("no turn is running: no thinking to stop", "info")
            return
        runner.stop_thinking()
        self.app.chat.notice("stopping the model's thinking…", "warning")

    def may_quit(self) -> bool:
        """Between turns, or pressed again at the question, yes. Mid-turn, the question."""
        # Asked, not "on screen": a second press can arrive before the question is drawn.
        if not self.app.busy or self._asking:
            return True
        self._asking = True
        self.app.push_screen(QuitScreen(), self._quit_answered)
        return False

    async def _quit_answered(self, quit_: bool | None) -> None:
        self._asking = False
        if quit_:
            await self.app.quit_now()
