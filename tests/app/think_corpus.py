"""A typing corpus with think pauses (the person stops to think between words, for seconds), for
screens/arming.py: sentences of 20-80 characters with lone `y`, `n`, `a`, `1`, `2`, `3` words,
typed at 5-15 keys/s (the issue's rate; each gap within +-50% of the sentence's 1/rate), with
LOG-NORMAL think pauses (median 1.5 s, sigma 0.9, up to 12 s) at word boundaries: after a
word's space (before the next word), before a word's space, and before the Enter. Not after a
sentence's lone first key (`y`, then seconds of nothing): that is what a person answering does.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from cerveau_tui.app.screens.arming import Keystroke

WORDS = (
    "a y n i t also please fix the test and run it again yes no try that then add "
    "a note about it in any case i think you should stay on the plan "
    "A N 1 2 3 Always Never Note 2 tests 3 files in 1 go y n a 1 2 3 b c v f k o"
).split()
#: Every key some dialog answers: approval y a A N n Esc and the scope numbers, gate y n Esc,
#: trust t i Esc, rewind b c v f k o Esc.
DECISIVE = frozenset("y a A N n t i 1 2 3 b c v f k o escape".split())
PAUSE_MEDIAN_S, PAUSE_SIGMA, PAUSE_MAX_S = 1.5, 0.9, 12.0


@dataclass(frozen=True)
class Timed:
    gap: float  # seconds since the key before (or since the sentence was due)
    stroke: Keystroke


def key_of(ch: str) -> str:
    return {" ": "space", ",": "comma", ".": "full_stop"}.get(ch, ch)


def sentence(rng: random.Random) -> str:
    words: list[str] = []
    target = rng.randint(20, 80)
    while len(" ".join(words)) < target:
        words.append(rng.choice(WORDS))
    text = " ".join(words)
    while len(text) > 80:  # whole words only: a cut could leave a lone decisive letter at the end
        words.pop()
        text = " ".join(words)
    return text if len(text) >= 20 else sentence(rng)


def think(rng: random.Random) -> float:
    return min(PAUSE_MAX_S, math.exp(rng.gauss(math.log(PAUSE_MEDIAN_S), PAUSE_SIGMA)))


def typed(rng: random.Random, text: str, pause_p: float = 0.35) -> list[Timed]:
    """The keys of `text` then Enter, each with the gap before it."""
    rate = rng.uniform(5.0, 15.0)
    chars = [*text, "\n"]
    out: list[Timed] = []
    for i, ch in enumerate(chars):
        gap = rng.uniform(0.5, 1.5) / rate if i else 0.0
        boundary = (
            (i and chars[i - 1] == " ")  # a new word
            or (ch == " " and i != 1)  # before a word's space (not after a lone first key)
            or ch == "\n"  # before Enter
        )
        if boundary and rng.random() < pause_p:
            gap += think(rng)
        stroke = Keystroke("enter") if ch == "\n" else Keystroke(key_of(ch), ch)
        out.append(Timed(gap, stroke))
    return out
