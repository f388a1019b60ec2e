"""Prose typed into the rewind dialog never rewinds anything (screens/armed.py's rules, as every
dialog): a seeded corpus rich in its keys (b c v f k o, and words made of them) is typed into it
at both of its questions, with pauses, Enter after each sentence; nothing is decided, not even the
"o again" confirmation, and every sentence reaches the prompt whole."""

from __future__ import annotations

import random
from pathlib import Path

from cerveau_tui.app.screens.rewind import RewindChoice, RewindPreview, RewindScreen, TurnRow

from .helpers import FakeClock, viewer_app, wait_until
from .test_deliberate import _submitted_hook, _type, _wait_on_clock

WORDS = (
    "b c v f k o ok back both code conversation forward keep overwrite go back to before "
    "check the cli of it b c o k v and f then fix code over"
).split()


def sentence(rng: random.Random) -> str:
    words: list[str] = []
    while len(" ".join(words)) < rng.randint(20, 70):
        words.append(rng.choice(WORDS))
    return " ".join(words)[:70]


PREVIEW = RewindPreview(
    TurnRow(2, "write the cli", "07:15", 2, 30, 4),
    files=2,
    turns_dropped=1,
    conflicts=["cli.py"],
    changes=["cli.py", "parser.py"],
)


async def test_prose_typed_while_it_asks_what_goes_back_decides_nothing(tmp_path: Path) -> None:
    await _corpus(tmp_path, "what goes back")


async def test_prose_typed_while_it_asks_about_the_persons_files_decides_nothing(
    tmp_path: Path,
) -> None:
    await _corpus(tmp_path, "the files changed outside")


async def _corpus(tmp_path: Path, stage: str) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    sent: list[str] = []
    answers: list[RewindChoice | None] = []
    rng = random.Random(25 if stage == "what goes back" else 26)
    async with app.run_test(message_hook=_submitted_hook(sent)) as pilot:
        mode = None if stage == "what goes back" else "both"
        screen = RewindScreen(PREVIEW, clock, app.prompt, mode=mode)
        app.push_screen(screen, answers.append)
        assert await wait_until(pilot, lambda: screen.on_screen)
        typed: list[str] = []
        for _ in range(6):
            await _wait_on_clock(pilot, clock, screen, rng.uniform(0.0, 8.0))
            text = sentence(rng)
            typed.append(text)
            await _type(pilot, clock, screen, text, rng)
            clock.advance(0.1)
            await pilot.press("enter")
            await _wait_on_clock(pilot, clock, screen, 1.0)
            assert screen._confirming is None  # not even "o again" was asked
        await pilot.pause()
        assert answers == [] and app.screen is screen
        assert screen.asking_conflicts == (mode is not None)  # the question did not move on
        assert sent == typed
    print(f"\nrewind dialog ({stage}): {len(typed)} sentences, 0 decisions, all in the prompt")
