"""A decision is a deliberate act (screens/armed.py): typed prose never answers a dialog, however
long it has been open, and no key of it is lost. A typing corpus (seeded) runs through the pure
state machine (thousands of sentences) and through every kind of dialog on the running app (the
clock injected and moved by hand, the screen's tick called as its timer would)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from textual.message import Message

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.screens.armed import (
    ALONE_AFTER_TYPING_S,
    ALONE_S,
    QUIET_S,
    TICK_S,
    ArmedModal,
    Arming,
    Keystroke,
)
from cerveau_tui.app.screens.gate import GateScreen
from cerveau_tui.app.screens.trust import TrustScreen
from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine
from cerveau_tui.app.widgets.prompt import PromptInput

from .helpers import AskInThread, FakeClock, arm, press_alone, viewer_app, wait_until

WORDS = (
    "a y n t i also please fix the test and run it again yes no try that then add "
    "a note about it in any case i think you should stay on the plan "
    "A N 1 2 3 Always Never Note 2 tests 3 files in 1 go"
).split()
#: Every key any dialog answers (approval y a A N n Esc and the scope numbers, gate y n Esc,
#: trust t i Esc).
DECISIVE = frozenset({"y", "a", "A", "N", "n", "t", "i", "1", "2", "3", "escape"})


def sentence(rng: random.Random) -> str:
    words: list[str] = []
    while len(" ".join(words)) < rng.randint(20, 80):
        words.append(rng.choice(WORDS))
    text = " ".join(words)[:80]
    return text if len(text) >= 20 else (text + " and then some more")[:80]


def _chat(app: Any) -> str:
    return "\n".join(n.text for n in app.screen_stack[0].query_one(ChatView).query(NoticeLine))


def key_of(ch: str) -> str:
    return {" ": "space", ",": "comma", ".": "full_stop"}.get(ch, ch)


# --- the state machine, thousands of sentences ------------------------------------------------


def test_a_corpus_of_typed_sentences_decides_nothing_and_loses_no_key() -> None:
    rng = random.Random(21)
    clock = FakeClock()
    decisions = lost = typed_keys = held = 0
    sentences = 3000
    for _ in range(sentences):
        arming = Arming(clock)  # a dialog opens
        replayed: list[Keystroke] = []
        clock.advance(rng.uniform(0.0, 10.0))  # the person starts typing some time later
        if arming.due():
            arming.arm(arming.generation)  # it armed while they were quiet
        strokes = [Keystroke(key_of(c), c) for c in sentence(rng)] + [Keystroke("enter")]
        for i, stroke in enumerate(strokes):
            if i:
                gap = 1.0 / rng.uniform(5.0, 15.0)
                # a person stops to think between words, now and then
                if strokes[i - 1].key == "space" and rng.random() < 0.15:
                    gap += rng.uniform(QUIET_S, 2.0)
                t_end = clock.t + gap
                while clock.t + TICK_S < t_end:  # the screen's timer, between two keys
                    clock.advance(TICK_S)
                    decisions += arming.answer() is not None
                    if arming.due():
                        arming.arm(arming.generation)
                clock.t = t_end
            typed = arming.press(stroke, stroke.key in DECISIVE)
            held += not typed  # a decision key met the armed dialog: held, then typing
            replayed += typed
        for _ in range(int(1.0 / TICK_S)):  # a second of quiet after Enter
            clock.advance(TICK_S)
            decisions += arming.answer() is not None
        typed_keys += len(strokes)
        lost += 0 if replayed == strokes else 1
    print(
        f"\ncorpus: {sentences} sentences, {typed_keys} keys, {held} decision keys met an armed "
        f"dialog: {decisions} decisions, {lost} sentences with a lost or reordered key"
    )
    assert held > 100  # the corpus reaches the case that matters
    assert decisions == 0 and lost == 0


def test_a_key_held_alone_is_the_answer_once_alone_s_passes() -> None:
    clock = FakeClock()
    arming = Arming(clock)
    clock.advance(QUIET_S)
    assert arming.due() and arming.arm(arming.generation)
    assert arming.press(Keystroke("y", "y"), decisive=True) == []  # held, not yet an answer
    clock.advance(ALONE_S / 2)
    assert arming.answer() is None
    clock.advance(ALONE_S / 2)
    assert arming.answer() == Keystroke("y", "y")


def test_a_key_pressed_soon_after_typing_must_stand_alone_longer() -> None:
    # A slow typist's pause mid-sentence, then `y`, then another pause: the last key typed came
    # a moment before, so ALONE_S is not enough (benchmarks/alone_window.py measured 5%).
    clock = FakeClock()
    arming = Arming(clock)
    arming.press(Keystroke("o", "o"), decisive=False)  # typing
    clock.advance(QUIET_S)
    assert arming.due() and arming.arm(arming.generation)
    assert arming.press(Keystroke("y", "y"), decisive=True) == []
    clock.advance(ALONE_S)
    assert arming.answer() is None
    clock.advance(ALONE_AFTER_TYPING_S - ALONE_S)
    assert arming.answer() == Keystroke("y", "y")


def test_a_held_key_followed_by_another_is_typing_in_order() -> None:
    clock = FakeClock()
    arming = Arming(clock)
    clock.advance(QUIET_S)
    arming.arm(arming.generation)
    a, l_ = Keystroke("a", "a"), Keystroke("l", "l")
    assert arming.press(a, decisive=True) == []
    clock.advance(0.1)
    assert arming.press(l_, decisive=False) == [a, l_]
    assert not arming.armed and arming.answer() is None


# --- every kind of dialog, on the running app --------------------------------------------------


async def _type(pilot: Any, clock: FakeClock, screen: ArmedModal[Any], text: str, rng: Any) -> None:
    for ch in text:
        gap = 1.0 / rng.uniform(5.0, 15.0)
        clock.advance(gap)
        screen.tick_arming()
        await pilot.press(key_of(ch))


async def _wait_on_clock(pilot: Any, clock: FakeClock, screen: ArmedModal[Any], s: float) -> None:
    """`s` seconds of the dialog sitting there (it arms, as it would)."""
    steps = int(s / TICK_S)
    for step in range(steps):
        clock.advance(TICK_S)
        screen.tick_arming()
        if step % 5 == 0:
            await pilot.pause()


def _submitted_hook(sent: list[str]) -> Any:
    seen: list[Message] = []

    def hook(message: Message) -> None:
        if isinstance(message, PromptInput.Submitted) and all(m is not message for m in seen):
            seen.append(message)
            sent.append(message.text)

    return hook


async def _corpus_into(pilot: Any, clock: FakeClock, screen: ArmedModal[Any], sent: list[str]):
    rng = random.Random(hash(type(screen).__name__) % 1000)
    typed: list[str] = []
    for _ in range(5):
        await _wait_on_clock(pilot, clock, screen, rng.uniform(0.0, 10.0))
        text = sentence(rng)
        typed.append(text)
        await _type(pilot, clock, screen, text, rng)
        clock.advance(0.1)
        await pilot.press("enter")
        await _wait_on_clock(pilot, clock, screen, 1.0)
        assert screen._confirming is None  # not even a confirmation prompt was opened
    await pilot.pause()
    return typed


async def test_typing_into_the_approval_dialog_decides_nothing_and_reaches_the_prompt(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    sent: list[str] = []
    async with app.run_test(message_hook=_submitted_hook(sent)) as pilot:
        # Three scopes offered: the numbers that choose them are answers too (pressed alone).
        choices = [("exact:touch /outside/x", "exactly"), ("command:touch", "touch"), ("x", "x")]
        ask = AskInThread(
            app, summary="touch /outside/x", scope="writes under /outside", choices=choices
        )
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        typed = await _corpus_into(pilot, clock, screen, sent)
        assert screen._chosen == {}  # no number of the prose chose a scope either
        assert ask.decision is None and screen.decisions == []
        assert app.approver.pending == [ask.req.request_id]
        assert sent == typed
        print(f"\napproval dialog: {len(typed)} sentences, 0 decisions, all keys in the prompt")


async def test_typing_into_the_done_check_question_decides_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    sent: list[str] = []
    answers: list[Any] = []
    async with app.run_test(message_hook=_submitted_hook(sent)) as pilot:
        screen = GateScreen("pytest -q", clock, app.prompt)
        app.push_screen(screen, answers.append)
        assert await wait_until(pilot, lambda: screen.on_screen)
        typed = await _corpus_into(pilot, clock, screen, sent)
        assert answers == [] and app.screen is screen
        assert sent == typed


async def test_typing_into_the_trust_dialog_decides_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    sent: list[str] = []
    answers: list[Any] = []
    async with app.run_test(message_hook=_submitted_hook(sent)) as pilot:
        screen = TrustScreen(["sandbox: full-access"], tmp_path / "config.toml", clock, app.prompt)
        app.push_screen(screen, answers.append)
        assert await wait_until(pilot, lambda: screen.on_screen)
        typed = await _corpus_into(pilot, clock, screen, sent)
        assert answers == [] and app.screen is screen
        assert sent == typed


async def test_a_dialog_open_for_3_s_does_not_take_also_please_fix_the_test(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app, summary="touch /outside/x", scope="writes under /outside")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        await _wait_on_clock(pilot, clock, screen, 3.0)
        assert screen.armed
        await _type(pilot, clock, screen, "also, please fix the test", random.Random(3))
        await _wait_on_clock(pilot, clock, screen, 2.0)
        assert ask.decision is None and screen.decisions == []
        assert app.prompt.text == "also, please fix the test"


# --- answers that are meant ----------------------------------------------------------------------


async def test_an_isolated_y_approves_once(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await _wait_on_clock(pilot, clock, app.screen, 5.0)  # type: ignore[arg-type]
        await press_alone(pilot, clock, "y")
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved"


async def test_a_alone_does_not_grant_the_session_until_confirmed(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app, summary="npm install", scope="commands starting with `npm`")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        await press_alone(pilot, clock, "a")
        await pilot.pause()
        assert ask.decision is None and screen.decisions == []
        await press_alone(pilot, clock, "a")  # alone again, once the confirmation is drawn
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved_session"


async def test_the_confirmation_prompt_spells_out_the_grant(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        AskInThread(app, summary="npm install", scope="commands starting with `npm`")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        await press_alone(pilot, clock, "a")
        clock.advance(QUIET_S)
        screen.tick_arming()
        assert await wait_until(pilot, lambda: screen.armed)
        keys = str(screen.query_one("#keys").render())
        assert "a again, alone" in keys and "commands starting with `npm`" in keys


async def test_another_key_after_a_goes_back_and_grants_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app, summary="npm install", scope="commands starting with `npm`")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        await press_alone(pilot, clock, "a", "y")
        await pilot.pause()
        assert ask.decision is None and screen.decisions == [] and screen._confirming is None
        await arm(pilot, clock)  # back to the dialog's own keys, once quiet again
        assert "y approve once" in str(screen.query_one("#keys").render())


async def test_a_session_grant_is_a_line_in_the_chat(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app, summary="npm install", scope="commands starting with `npm`")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "a", "a")
        ask.thread.join(5)
        assert await wait_until(
            pilot,
            lambda: "you approved for this session: commands starting with `npm`" in _chat(app),
        )


async def test_the_done_check_off_needs_n_twice_and_is_a_line_in_the_chat(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    answers: list[Any] = []
    async with app.run_test() as pilot:
        screen = GateScreen("pytest -q", clock, app.prompt, say=app.chat.notice)
        app.push_screen(screen, answers.append)
        assert await wait_until(pilot, lambda: screen.on_screen)
        await press_alone(pilot, clock, "n")
        await pilot.pause()
        assert answers == []
        await press_alone(pilot, clock, "n")
        assert await wait_until(pilot, lambda: answers == ["off"])
        assert "you chose no done check for this workspace" in _chat(app)


async def test_the_grant_line_shows_the_models_terminal_controls_inert(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app, summary="ls \x1b[2J\x1b]52;c;eA==\x07")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "y")
        ask.thread.join(5)
        assert await wait_until(pilot, lambda: "you approved once: bash: ls" in _chat(app))
        assert "\x1b" not in _chat(app) and "\\x1b" in _chat(app)
