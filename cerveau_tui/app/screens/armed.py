"""A decision is a deliberate act: a dialog answers a key only when it was pressed on its own.

The failures this prevents (found by a person, in tmux): they were typing a steering message
while a command ran, the approval dialog opened mid-word, and the next letters became answers.
A fixed grace period after the dialog appears does not help someone who keeps typing, and
arming once does not help someone who starts typing later: a dialog open for 3 s took "also,
please fix the test", its `a` granted a session-wide write and the rest of the sentence was lost.

The rules, for every dialog built on `ArmedModal` (the clock is injected; `tick()`, a timer or a
test, notices time passing):
- Quiet BEFORE: the dialog ARMS once it is on screen and the keyboard has been quiet for QUIET_S
  (since it appeared, or since the last key). It arms one refresh AFTER its real keys are drawn,
  and only if no key came in between: a key answers what the person could see, never a dialog
  still showing "arming…". Every key and paste restarts the quiet period.
- Quiet AFTER: a decision key pressed while armed is HELD, not acted on. If any other key (or a
  paste) comes within ALONE_S, the held key was the start of a word: it and the new key go to
  the prompt, in that order, and the dialog arms again from the quiet period. Only when ALONE_S
  passes with no key is the held key the person's answer (its binding runs); ALONE_AFTER_TYPING_S
  when the last key that was typing came less than TYPED_RECENTLY_S before it (a slow typist's
  pause mid-sentence). The held key is shown at once ("y… confirming"), so the person sees it
  took.
- A word's first letter is not an answer (arming.py): a key pressed where the prompt's cursor
  follows a space or a new line, however long the quiet around it, is only PROPOSED ("y? you
  were typing: y again, alone, answers"); the same key again, alone, answers, any other key
  makes both typing. A person who stops to think between words for ten seconds answers nothing.
- Typing is never lost: every key that is not an answer is replayed into the prompt the person
  was typing in (`KeySink`), in order: characters at the cursor, Backspace deletes,
  Shift+Enter/Ctrl+J insert a newline, Enter sends the prompt exactly as it would have.
  Navigation keys (arrows, PgUp) bound to nothing on the dialog reach its focused widget (a long
  diff scrolls); they are not typing, so they neither arm nor disarm (a key held for an answer
  is still voided by them: any other key does that).
- Broader than once (a session grant, anything saved for the workspace) asks for the same key
  again, alone (`confirmed()`): after a first answer the keys line asks for it, and any other
  answer, or typing, goes back. Prose cannot type two isolated keys.
- Keys bound with priority at the app level (Ctrl+C, Ctrl+Q) keep their meaning throughout.
- The dialog re-arms whenever what it asks changes (`rearm()`: the next request of a queue
  reaches the head) and whenever it comes back on screen (another screen was above it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from textual import events
from textual.actions import parse
from textual.binding import Binding
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from .arming import (
    ALONE_AFTER_TYPING_S,
    ALONE_S,
    QUIET_S,
    TYPED_RECENTLY_S,
    Arming,
    Keystroke,
)

__all__ = [
    "ALONE_AFTER_TYPING_S",
    "ALONE_S",
    "ARMING_TEXT",
    "QUIET_S",
    "TICK_S",
    "TYPED_RECENTLY_S",
    "ArmedModal",
    "ArmedQuestion",
    "Arming",
    "KeySink",
    "Keystroke",
    "Say",
    "held_line",
    "proposed_line",
]

TICK_S = 0.1
ARMING_TEXT = "arming… (keys typed now go to the prompt)"
#: Keys without text that still edit the prompt: replayed, never passed to the dialog's widgets.
EDITING_KEYS = frozenset({"enter", "backspace", "shift+enter", "ctrl+j", "tab", "delete"})

T = TypeVar("T")
Say = Callable[[str, str], object]  # (text, level): a line in the chat (ChatView.notice)


class KeySink(Protocol):
    """Where keys that were typing go: the prompt (widgets/prompt.py PromptInput)."""

    def replay_key(self, key: str, character: str | None) -> bool: ...
    def replay_paste(self, text: str) -> None: ...


class ArmedModal(ModalScreen[T]):
    """A modal whose keys count only when pressed on their own. Subclasses render their keys in
    `keys_content` into a `Static#keys`, may react in `on_armed`, and guard broad answers with
    `confirmed()`."""

    AUTO_FOCUS = None  # nothing focused while arming: every key reaches `on_key` below first
    DEFAULT_CSS = """
    ArmedModal #keys.-arming { color: $text-muted; text-style: italic; }
    ArmedModal #keys.-confirm { color: $text-warning; }
    """

    def __init__(
        self,
        clock: Callable[[], float],
        sink: KeySink | None,
        quiet_s: float = QUIET_S,
        *,
        alone_s: float = ALONE_S,
        say: Say | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._sink = sink
        self.say = say
        self.arming = Arming(clock, quiet_s, alone_s, before_cursor=self._before_cursor)
        self._real_keys_drawn = False
        self.on_screen = False  # the screen is current (resumed), so its arming clock runs
        self._answering: str | None = None  # the key whose binding runs now
        self._confirming: tuple[str, str] | None = None  # (what, key) awaiting the same key again
        self._confirm_text: Content = Content()

    @property
    def armed(self) -> bool:
        return self.arming.armed

    def _before_cursor(self) -> str | None:
        """The character before the prompt's cursor ("" when empty): the prompt the keys go to
        is the truth about whether the next key begins a word (a draft typed before the dialog
        opened counts). None without a prompt: Arming follows the keys itself."""
        sink = self._sink
        if not isinstance(sink, TextArea):
            return None
        row, column = sink.cursor_location
        if column:
            return sink.document.get_line(row)[column - 1]
        return "\n" if row else ""

    def _replay(self, strokes: list[Keystroke]) -> None:
        if self._sink is not None:
            for stroke in strokes:
                self._sink.replay_key(stroke.key, stroke.character)

    def keys_content(self) -> Content:
        raise NotImplementedError

    def on_armed(self) -> None:
        """Called once the real keys are on screen and the dialog answers them."""

    def taking_text(self) -> bool:
        """True while a widget of the dialog takes typed text (a reason): keys are its own."""
        return False

    def changes_question(self, key: str) -> bool:
        """True for an answer that only changes what a broad answer would cover (a scope's
        number): while confirming, it goes back to the keys AND takes effect."""
        return False

    # --- broad answers -------------------------------------------------------------------------
    def confirmed(self, what: str, prompt: Content) -> bool:
        """For an answer broader than once: True when this is the second time in a row that the
        same key, alone, asked for `what`. The first time, `prompt` replaces the keys line."""
        key = self._answering or ""
        if self._confirming == (what, key):
            self._confirming = None
            return True
        self._confirming, self._confirm_text = (what, key), prompt
        self._replay(self.arming.drop())  # the second key answers the prompt, once it is drawn
        self.show_keys()
        return False

    def _cancel_confirm(self) -> None:
        if self._confirming is not None:
            self._confirming = None
            self.show_keys()

    # --- the state machine ---------------------------------------------------------------------
    def rearm(self) -> None:
        self._replay(self.arming.drop())
        self._confirming = None
        if self.is_mounted:
            self.set_focus(None)
            self.show_keys()

    def tick_arming(self) -> None:
        if not self.on_screen:
            return
        stroke = self.arming.answer()
        if stroke is not None:
            self.show_keys()  # "y… confirming" goes; the answer then draws what follows it
            self._answer(stroke)
            return
        if not self.arming.due():
            return
        generation = self.arming.generation
        self.show_keys(armed=True)
        self.call_after_refresh(self._arm, generation)

    def _arm(self, generation: int) -> None:
        # Redrawn as "arming…" since (a key, a queue change)? Then the next tick tries again.
        if self._real_keys_drawn and self.arming.arm(generation):
            self.on_armed()

    def _answer(self, stroke: Keystroke) -> None:
        if self._confirming is not None and stroke.key != self._confirming[1]:
            if not self.changes_question(stroke.key):
                self.arming.restart()  # another answer while confirming goes back, decides nothing
                self._cancel_confirm()
                return
            self._cancel_confirm()  # it goes back AND does what it does (choose another scope)
        bound = self._decision(stroke.key)
        if bound is None:
            return
        # Run here, in the tick, not queued: a key pressed after this must meet the dialog as
        # this answer left it (a confirmation prompt, the next request).
        _, name, params = parse(bound)
        method = getattr(self, f"action_{name}", None)
        if method is None:
            return
        self._answering = stroke.key  # read by `confirmed()`: "the same key again"
        try:
            method(*params)
        finally:
            self._answering = None

    def _decision(self, key: str) -> str | None:
        """The action this dialog binds to `key` (the person's keymap applied), if enabled."""
        active = self.active_bindings.get(key)
        if active is None or active.node is not self or not active.enabled:
            return None
        # Only the dialog's own answers: Screen's inherited Tab or Ctrl+C are not decisions.
        if active.binding.id is None or active.binding.id not in self._answer_ids():
            return None
        return active.binding.action

    @classmethod
    def _answer_ids(cls) -> set[str]:
        return {b.id for b in cls.BINDINGS if isinstance(b, Binding) and b.id}

    def show_keys(self, armed: bool | None = None) -> None:
        armed = self.armed if armed is None else armed
        keys = self.query_one("#keys", Static)
        held, proposed = self.arming.held, self.arming.proposed
        # A held or proposed key is drawn from the press on, armed or not (after a proposal,
        # only the same key again is held, and any other key types both either way).
        waiting = held is not None or proposed is not None
        if held is not None:
            keys.update(Content.assemble(held_line(held.key), "\n", self._keys_shown()))
        elif proposed is not None:
            keys.update(Content.assemble(proposed_line(proposed.key), "\n", self._keys_shown()))
        elif not armed:
            keys.update(Content(ARMING_TEXT))
        else:
            keys.update(self._keys_shown())
        keys.set_class(not armed and not waiting, "-arming")
        keys.set_class(armed and self._confirming is not None, "-confirm")
        self._real_keys_drawn = armed

    def _keys_shown(self) -> Content:
        return self._confirm_text if self._confirming else self.keys_content()

    # --- Textual handlers ----------------------------------------------------------------------
    def on_screen_resume(self) -> None:
        self.on_screen = True
        self.rearm()

    def on_screen_suspend(self) -> None:
        # Dismissed, or another screen above: keys still waiting were typing (none lost).
        self.on_screen = False
        if self.arming.held is not None or self.arming.proposed is not None:
            self._replay(self.arming.drop())

    def on_key(self, event: events.Key) -> None:
        if self.taking_text():
            return  # a reason being typed: the input has the keys, Esc its binding
        decisive = self._decision(event.key) is not None
        navigation = not event.is_printable and event.key not in EDITING_KEYS
        if navigation and not decisive and self.arming.held is None:
            return  # not typing: the focused widget scrolls, the keys stay as they are
        # Stopped here, the key never reaches the bindings (checked once it bubbles to the app);
        # a held key's binding runs from `tick_arming` when it turns out to be alone.
        event.stop()
        event.prevent_default()
        asked = self._confirming is not None and event.key == self._confirming[1]
        typed = self.arming.press(Keystroke(event.key, event.character), decisive, asked)
        if typed:
            self._cancel_confirm()
            self.show_keys()  # a key between "drawn" and "armed" puts "arming…" back
        elif self.arming.held is not None or self.arming.proposed is not None:
            self.show_keys()  # the key is seen to take at once; it lands ALONE_S later
        self._replay(typed)

    def on_paste(self, event: events.Paste) -> None:
        if self.taking_text():
            return
        event.stop()
        event.prevent_default()
        typed = self.arming.paste(event.text)
        self._cancel_confirm()
        self.show_keys()
        self._replay(typed)
        if self._sink is not None:
            self._sink.replay_paste(event.text)


def held_line(key: str) -> Content:
    """A decision key held for its quiet-after period, shown the moment it is pressed: it landed
    ALONE_S later with nothing on screen, and `y` then Enter by habit typed "y" into the prompt."""
    return Content.assemble(
        (f"{key}…", "bold $text-accent"),
        (" confirming (another key now makes it typing, for the prompt)", "$text-muted"),
    )


def proposed_line(key: str) -> Content:
    """A key that stood alone where a word begins (arming.py): it answers only when pressed
    again, alone; any other key types it into the prompt."""
    return Content.assemble(
        (f"{key}?", "bold $text-accent"),
        # Fits the dialog at 80 columns on one line (63 characters with the key).
        (f" you were typing: {key} again, alone, answers; other keys type it", "$text-muted"),
    )


class ArmedQuestion(ArmedModal[T]):
    """One question at start-up (trust a config, use a done check): its keys drawn at mount,
    armed by the tick, and answered with `dismiss(value)` only once armed."""

    def on_mount(self) -> None:
        self.show_keys()
        self.set_interval(TICK_S, self.tick_arming)

    def answer(self, value: T) -> None:
        if self.armed:
            self.dismiss(value)
