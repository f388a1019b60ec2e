"""Attention: the terminal rings the person when something waits for them.

The failure this answers: on a slow local model an approval dialog opened minutes into a turn
the person had stopped watching, and denied itself 120 s later with no bell and no notification.
So when an approval or a question waits, and when a turn that ran longer than LONG_TURN_S ends,
the app writes the bell and a desktop notification through the terminal: OSC 9 (iTerm2,
WezTerm, kitty, Windows Terminal, foot) and OSC 777 (rxvt-unicode, VTE/GNOME Terminal, Ghostty).
A terminal that knows neither ignores them. On by default; `notify = false` turns it off.
Inside tmux (where the failure was seen) these OSC strings may stop at tmux (not verified here): each is
also sent wrapped in tmux's passthrough (ESC P tmux; ... ESC backslash), which reaches the outer
terminal where `allow-passthrough` is on and is dropped silently where it is not; the bell
tmux passes on by itself.

Textual owns the terminal, so the sequences go through its driver's `write` (what `App.bell`
does), on the UI thread. What is written is built here from the app's own words, and every
character outside printable ASCII is dropped: the tool name and summary come from the model, and
an ESC or BEL inside an OSC body would end it early and let the rest act on the terminal (OSC 52
writes the clipboard).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from textual.app import App

#: A turn shorter than this was watched: ringing at its end would be noise.
LONG_TURN_S = 60.0
TITLE = "cerveau"
_UNSAFE = re.compile(r"[^\x20-\x7e]|;")  # ';' separates OSC 777's fields
_MAX_BODY = 120

Write = Callable[[str], None]


def clean(text: str, limit: int = _MAX_BODY) -> str:
    """Printable ASCII only, no field separator, bounded: safe inside an OSC string."""
    text = _UNSAFE.sub(" ", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "~"


def sequences(title: str, body: str, tmux: bool = False) -> str:
    """The bell, then OSC 9 and OSC 777 notifications (BEL-terminated, the widest support),
    and under tmux the same two again through its passthrough."""
    title, body = clean(title, 40), clean(body)
    notes = [f"\x1b]9;{title}: {body}\x07", f"\x1b]777;notify;{title};{body}\x07"]
    if tmux:
        notes += ["\x1bPtmux;" + n.replace("\x1b", "\x1b\x1b") + "\x1b\\" for n in notes]
    return "\x07" + "".join(notes)


def terminal_writer(app: App[Any]) -> Write:
    """Raw bytes to the terminal through Textual's driver (none while headless: nothing)."""

    def write(text: str) -> None:
        driver = app._driver  # noqa: SLF001 - Textual's own `bell()` writes here; no public API
        if driver is not None:
            driver.write(text)

    return write


class Attention:
    """Rings the person. `enabled` is read at each ring: the trust dialog may swap settings."""

    def __init__(
        self,
        write: Write,
        clock: Callable[[], float],
        enabled: Callable[[], bool],
        tmux: bool | None = None,
    ) -> None:
        self._write = write
        self._tmux = bool(os.environ.get("TMUX")) if tmux is None else tmux
        self._clock = clock
        self._enabled = enabled
        self._turn_started: float | None = None
        self.rung: list[str] = []  # the bodies rung, for the person's record and for tests

    def ring(self, body: str) -> None:
        if not self._enabled():
            return
        self.rung.append(clean(body))
        self._write(sequences(TITLE, body, self._tmux))

    def waiting(self, request: dict[str, Any]) -> None:
        """An approval or a question is on screen, waiting for the person."""
        if request.get("tool") == "question":
            self.ring("a question for you")
        else:
            self.ring(f"approval needed: {request.get('tool', '?')}")

    def turn_started(self) -> None:
        self._turn_started = self._clock()

    def turn_ended(self) -> None:
        started, self._turn_started = self._turn_started, None
        if started is None:
            return
        took = self._clock() - started
        if took >= LONG_TURN_S:
            self.ring(f"turn ended after {int(took // 60)} min {int(took % 60)} s")
