"""Could the quiet-after window (screens/armed.py ALONE_S, 0.4 s) be shorter? A lone decision key
lands ALONE_S after it is pressed; shorter is snappier, but a key typed mid-sentence is taken as
an answer when the NEXT key comes later than ALONE_S. This replays a typing corpus through the
real state machine (Arming) for several windows and prints how many sentences were answered.

    .venv/bin/python benchmarks/alone_window.py [SENTENCES]

The corpus: sentences of 20-80 characters from the words dialogs answer to (y, a, n, A, N,
numbers among prose), typed at 3-15 keys/s with log-normal gaps (median 1/rate, sigma 0.45: the
spread of real inter-key intervals), a pause of QUIET_S-2 s between some words, starting 0-10 s
after the dialog opened. Prints figures; asserts nothing (tests/app/test_deliberate.py holds
the 0 for the window in use, on its own corpus).
"""

from __future__ import annotations

import math
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.app.screens.armed import (  # noqa: E402
    ALONE_AFTER_TYPING_S,
    ALONE_S,
    QUIET_S,
    TICK_S,
    Arming,
    Keystroke,
)

WORDS = (
    "a y n i also please fix the test and run it again yes no try that then add a note about "
    "it in any case I think you should stay on the plan A N 1 2 3 Always Never Note 2 tests"
).split()
DECISIVE = frozenset({"y", "a", "A", "N", "n", "1", "2", "3"})


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def sentence(rng: random.Random) -> str:
    words: list[str] = []
    while len(" ".join(words)) < rng.randint(20, 80):
        words.append(rng.choice(WORDS))
    return " ".join(words)[:80]


def answered(
    alone_s: float, sentences: int, after_typing_s: float, seed: int = 21
) -> tuple[int, Counter[str]]:
    """Sentences in which some key was taken as an answer, and which keys were taken."""
    rng, clock, hits, taken = random.Random(seed), Clock(), 0, Counter[str]()
    for _ in range(sentences):
        arming = Arming(clock, QUIET_S, alone_s, after_typing_s)
        clock.t += rng.uniform(0.0, 10.0)
        if arming.due():
            arming.arm(arming.generation)
        rate = rng.uniform(3.0, 15.0)
        keys = [*sentence(rng), "enter"]
        hit = False
        for i, ch in enumerate(keys):
            if i:
                gap = math.exp(rng.gauss(math.log(1.0 / rate), 0.45))
                if keys[i - 1] == " " and rng.random() < 0.15:
                    gap += rng.uniform(QUIET_S, 2.0)
                end = clock.t + gap
                while clock.t + TICK_S < end:
                    clock.t += TICK_S
                    stroke = arming.answer()
                    if stroke is not None:
                        hit, taken[stroke.key] = True, taken[stroke.key] + 1
                    if arming.due():
                        arming.arm(arming.generation)
                clock.t = end
            arming.press(Keystroke(ch, ch if len(ch) == 1 else None), ch in DECISIVE)
        clock.t += 1.0
        hit |= arming.answer() is not None
        hits += hit
    return hits, taken


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    print(f"{n} typed sentences per window (3-15 keys/s, log-normal gaps); in use: {ALONE_S} s")
    rules = (("ALONE_S only", 0.0), (f"and {ALONE_AFTER_TYPING_S} s after typing (in use)", None))
    for label, after in rules:
        print(f"{label}:")
        for alone in (0.2, 0.3, 0.4, 0.6):
            hits, taken = answered(alone, n, ALONE_AFTER_TYPING_S if after is None else after)
            keys = ", ".join(f"{k} {v}" for k, v in taken.most_common())
            print(f"  ALONE_S {alone:.2f} s: {hits:4} sentences answered ({hits / n:.2%}); {keys}")


if __name__ == "__main__":
    main()
