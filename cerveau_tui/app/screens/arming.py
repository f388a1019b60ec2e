"""The pure state of a dialog that answers a key only when it was pressed on its own (armed.py is
the screen around it). No Textual here: a clock is injected, and so is what the prompt holds.

Why a position rule and not a longer window. With the windows alone (quiet for QUIET_S before a
key, ALONE_S after it), a person who stops to think between words beat them: "fix the test", a
pause of several seconds, `y`, another pause, then the rest. On a corpus with log-normal think
pauses (tests/app/think_corpus.py) the windows alone let 39.6% of sentences answer something,
and no window is long enough for someone who thinks for ten seconds. So where the key lands
decides, not the clock: a key pressed where the prompt's cursor follows a space or a new line,
or into a prompt emptied after typing (a sentence was sent with Enter while the dialog was up),
begins a word of what the person is typing, however long the quiet before or after it. It never
answers on its own: it is PROPOSED from the press on ("y? ... y again, alone, answers"), and only
the same key again, alone, answers; any other key makes both typing, in order. Prose does not
type one letter twice with nothing between at a word's start.

What stays timed is the typing itself, never a pause to think: keys within a word come less
than QUIET_S apart (so the dialog does not arm mid-word), and the very first key typed into a
dialog, into an empty prompt, is followed by the next within ALONE_S (ALONE_AFTER_TYPING_S after
recent typing). That first key, then nothing, is exactly what a person answering does, so it
answers, as a key after a word's last letter does (a typist who stopped: "say hi", then `y`).
At the issue's 5-15 keys/s (0.07-0.2 s a key) both hold by a factor of two; a typist slower than
2.5 keys/s on the first two keys of the first sentence can still answer (benchmarks/
alone_window.py counts it). Keys with no text (Esc) are never typing, so never proposed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: 0.6 s: longer than the gap between two keys of someone typing (typically 0.1-0.3 s), short
#: enough that a person who stopped to read does not notice the wait.
QUIET_S = 0.6
#: 0.4 s with no further key: at 5 keys/s (a slow typist) the next key of a word comes within
#: 0.2 s; a person who answers lifts their finger and reads.
ALONE_S = 0.4
#: A decision key pressed within TYPED_RECENTLY_S of the last key that was typing (prose, sent
#: to the prompt) must stand alone for ALONE_AFTER_TYPING_S instead: a person answering has
#: usually not been typing a moment before, and waits no longer.
TYPED_RECENTLY_S = 3.0
ALONE_AFTER_TYPING_S = 1.0
_EPS = 1e-9  # 1000.6 + 0.4 - 1000.6 < 0.4 in floats: a period that has passed, has passed

#: What the character before the prompt's cursor is ("" for an empty prompt), or None when the
#: caller cannot tell (then Arming follows the keys it passed on itself).
BeforeCursor = Callable[[], "str | None"]


@dataclass(frozen=True)
class Keystroke:
    key: str
    character: str | None = None

    @property
    def text(self) -> bool:
        """The key types text (Esc, arrows and Enter do not: prose never holds Esc)."""
        return (
            self.character is not None and len(self.character) == 1 and self.character.isprintable()
        )


class Arming:
    """When the quiet period started, whether the dialog is armed, the key held until ALONE_S
    tells whether it was pressed on its own, and a key proposed because it began a word."""

    def __init__(
        self,
        clock: Callable[[], float],
        quiet_s: float = QUIET_S,
        alone_s: float = ALONE_S,
        after_typing_s: float = ALONE_AFTER_TYPING_S,
        before_cursor: BeforeCursor | None = None,
    ) -> None:
        self._clock = clock
        self.quiet_s = quiet_s
        self.alone_s = alone_s
        self.after_typing_s = max(alone_s, after_typing_s)
        self._before_cursor = before_cursor
        self._line: list[str] = []  # the prompt as the keys passed on have left it (no cursor)
        self._typed_at = -1e9  # the last key that turned out to be typing
        self._typed_any = False  # a key went to the prompt since the dialog opened
        self._needed = alone_s  # the quiet after the held key it needs
        self.armed = False
        self.generation = 0  # bumped by every key and restart; an arm scheduled before is void
        self._since = clock()
        self.held: Keystroke | None = None
        self._held_at = 0.0
        #: A key that stood alone where a word begins: it answers only when pressed again, alone.
        self.proposed: Keystroke | None = None

    # --- where the prompt's cursor is -------------------------------------------------------------
    def starts_word(self) -> bool:
        """The next key begins a word of what the person is typing: the prompt's cursor follows
        a space or a new line, or the prompt is empty again after typing (a sentence sent with
        Enter while the dialog was up: the next key begins the next one)."""
        before = self._before_cursor() if self._before_cursor is not None else None
        if before is None:
            before = self._line[-1] if self._line else ""
        return before.isspace() if before else self._typed_any

    def _typed(self, strokes: list[Keystroke], now: float) -> list[Keystroke]:
        """`strokes` go to the prompt: follow what they do to it (for a caller with no prompt)."""
        for s in strokes:
            if s.key == "enter":
                self._line.clear()
            elif s.key == "backspace":
                if self._line:
                    self._line.pop()
            elif s.key in ("shift+enter", "ctrl+j"):
                self._line.append("\n")
            elif s.text:
                self._line.append(s.character or "")
        if strokes:
            self._typed_at, self._typed_any = now, True
        return strokes

    def _pending(self) -> list[Keystroke]:
        """The keys waiting to be told answer or typing, in the order they were pressed."""
        out = [k for k in (self.proposed, self.held) if k is not None]
        self.proposed = self.held = None
        return out

    # --- the machine ----------------------------------------------------------------------------
    def restart(self) -> None:
        self.armed = False
        self.generation += 1
        self._since = self._clock()

    def press(self, stroke: Keystroke, decisive: bool, confirming: bool = False) -> list[Keystroke]:
        """A key came; `decisive`: it answers the dialog if pressed alone; `confirming`: it is
        the key a confirmation prompt on screen asks for again (that prompt only follows an
        answer, so it is not proposed). Returns the keys that turned out to be typing, in order
        (for the prompt); a decisive key while armed is held."""
        now = self._clock()
        again = self.proposed is not None and stroke.key == self.proposed.key
        # The same key again answers a proposal armed or not: the line on screen since the first
        # press says "y again, alone, answers", and any other key types both either way.
        if self.held is None and decisive and ((self.armed and self.proposed is None) or again):
            fresh = self.proposed is None and not confirming
            if stroke.text and fresh and self.starts_word():
                # Proposed at once, not held first: held, it showed "y… confirming" for its
                # quiet-after, then flipped to "y? you were typing" (issue 33). The state drawn
                # at the press is the one that holds; another key within ALONE_S types both, as
                # a held key's would.
                self.proposed = stroke
                self.restart()
                return []
            self.held, self._held_at = stroke, now
            recent = now - self._typed_at < TYPED_RECENTLY_S
            self._needed = self.after_typing_s if recent else self.alone_s
            return []
        typed = [*self._pending(), stroke]
        self.restart()
        return self._typed(typed, now)

    def paste(self, text: str = "") -> list[Keystroke]:
        """A paste came: it is typing, and so are the keys waiting before it (returned)."""
        now = self._clock()
        typed = self._typed(self._pending(), now)
        self._line.extend(text[-1:])
        self._typed_at, self._typed_any = now, True
        self.restart()
        return typed

    def drop(self) -> list[Keystroke]:
        """What is asked changed: keys waiting for the old question answer nothing. Returned, so
        they reach the prompt (a proposed `y` was the first letter of a word as likely as not)."""
        typed = self._pending()
        self.restart()
        return self._typed(typed, self._clock())

    def answer(self) -> Keystroke | None:
        """The held key, once its quiet-after passed with no other key: the person's answer (a
        key that began a word is never held: `press` proposed it)."""
        if self.held is None or self._clock() - self._held_at < self._needed - _EPS:
            return None
        stroke, self.held = self.held, None
        self.proposed = None  # held after a proposal: the same key again, alone
        return stroke

    def due(self) -> bool:
        return not self.armed and self._clock() - self._since >= self.quiet_s - _EPS

    def arm(self, generation: int) -> bool:
        if generation != self.generation or self.armed:
            return False
        self.armed = True
        return True
