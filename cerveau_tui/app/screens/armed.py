"""Arming: a dialog that asks the person something answers keys only once they were meant for it.

The failure this prevents (found by a person, in tmux): they were typing a steering message while
a command ran, the approval dialog opened mid-word, and the next letters became answers (`a`,
"approve for the session"); a file was written outside the workspace. A fixed grace period after
the dialog appears does not help someone who keeps typing.

The rules, for every dialog built on `ArmedModal`:
- The dialog arms only once it has been on screen AND the keyboard has been quiet for QUIET_S
  since it appeared: each key (or paste) during arming restarts the quiet period. The clock is
  injected; `tick()` (a timer, or a test) notices the quiet period has passed.
- It arms one refresh AFTER the real keys are drawn, and only if no key came in between: a key
  answers what the person could see, never a dialog still showing "arming…".
- While arming, the keys line reads "arming… (keys typed now go to the prompt)" and every key is
  replayed into the prompt the person was typing in (`KeySink`), in order: characters at the
  cursor, Backspace deletes, Shift+Enter/Ctrl+J insert a newline, and Enter sends the prompt
  exactly as it would have (a steering message while a turn runs). Keys that carry no text
  (arrows, Tab, function keys, Esc) do nothing to the dialog or the prompt; they still restart
  the quiet period. Esc is "deny and stop" only once armed: during arming it is like any key.
  Keys bound with priority at the app level (Ctrl+C, Ctrl+Q) keep their meaning throughout.
- The dialog re-arms whenever what it asks changes (`rearm()`: the next request of a queue
  reaches the head) and whenever it comes back on screen (another screen was above it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from textual import events
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

#: 0.6 s: longer than the gap between two keys of someone typing (typically 0.1-0.3 s), short
#: enough that a person who stopped to read does not notice the wait.
QUIET_S = 0.6
TICK_S = 0.1
ARMING_TEXT = "arming… (keys typed now go to the prompt)"

T = TypeVar("T")


class KeySink(Protocol):
    """Where keys typed during arming go: the prompt (widgets/prompt.py PromptInput)."""

    def replay_key(self, key: str, character: str | None) -> bool: ...
    def replay_paste(self, text: str) -> None: ...


class Arming:
    """The pure state: when the quiet period started, and whether the dialog is armed."""

    def __init__(self, clock: Callable[[], float], quiet_s: float = QUIET_S) -> None:
        self._clock = clock
        self.quiet_s = quiet_s
        self.armed = False
        self.generation = 0  # bumped by every key and restart; an arm scheduled before is void
        self._since = clock()

    def restart(self) -> None:
        self.armed = False
        self.generation += 1
        self._since = self._clock()

    def key(self) -> bool:
        """A key came. True: it is for the dialog. False: the quiet period starts over."""
        if self.armed:
            return True
        self.restart()
        return False

    def due(self) -> bool:
        return not self.armed and self._clock() - self._since >= self.quiet_s

    def arm(self, generation: int) -> bool:
        if generation != self.generation or self.armed:
            return False
        self.armed = True
        return True


class ArmedModal(ModalScreen[T]):
    """A modal whose keys count only once armed. Subclasses render their keys in `keys_content`
    into a `Static#keys` and may react in `on_armed`."""

    AUTO_FOCUS = None  # nothing focused while arming: every key reaches `on_key` below first
    DEFAULT_CSS = """
    ArmedModal #keys.-arming { color: $text-muted; text-style: italic; }
    """

    def __init__(
        self,
        clock: Callable[[], float],
        sink: KeySink | None,
        quiet_s: float = QUIET_S,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._sink = sink
        self.arming = Arming(clock, quiet_s)
        self._real_keys_drawn = False
        self.on_screen = False  # the screen is current (resumed), so its arming clock runs

    @property
    def armed(self) -> bool:
        return self.arming.armed

    def keys_content(self) -> Content:
        raise NotImplementedError

    def on_armed(self) -> None:
        """Called once the real keys are on screen and the dialog answers them."""

    # --- the state machine ---------------------------------------------------------------------
    def rearm(self) -> None:
        self.arming.restart()
        if self.is_mounted:
            self.set_focus(None)
            self.show_keys()

    def tick_arming(self) -> None:
        if not self.on_screen or not self.arming.due():
            return
        generation = self.arming.generation
        self.show_keys(armed=True)
        self.call_after_refresh(self._arm, generation)

    def _arm(self, generation: int) -> None:
        # Redrawn as "arming…" since (a queue change)? Then the next tick draws and tries again.
        if self._real_keys_drawn and self.arming.arm(generation):
            self.on_armed()

    def show_keys(self, armed: bool | None = None) -> None:
        armed = self.armed if armed is None else armed
        keys = self.query_one("#keys", Static)
        keys.update(self.keys_content() if armed else Content(ARMING_TEXT))
        keys.set_class(not armed, "-arming")
        self._real_keys_drawn = armed

    # --- Textual handlers ----------------------------------------------------------------------
    def on_screen_resume(self) -> None:
        self.on_screen = True
        self.rearm()

    def on_screen_suspend(self) -> None:
        self.on_screen = False

    def on_key(self, event: events.Key) -> None:
        if self.arming.key():
            return  # armed: the bindings decide
        # Stopped here, the key never reaches the bindings (checked once it bubbles to the app).
        event.stop()
        event.prevent_default()
        self.show_keys()  # a key between "drawn" and "armed" puts "arming…" back
        if self._sink is not None:
            self._sink.replay_key(event.key, event.character)

    def on_paste(self, event: events.Paste) -> None:
        if self.arming.key():
            return
        event.stop()
        event.prevent_default()
        self.show_keys()
        if self._sink is not None:
            self._sink.replay_paste(event.text)


class ArmedQuestion(ArmedModal[T]):
    """One question at start-up (trust a config, use a done check): its keys drawn at mount,
    armed by the tick, and answered with `dismiss(value)` only once armed."""

    def on_mount(self) -> None:
        self.show_keys()
        self.set_interval(TICK_S, self.tick_arming)

    def answer(self, value: T) -> None:
        if self.armed:
            self.dismiss(value)
