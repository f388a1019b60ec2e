"""A decision is a deliberate act even for a person who stops to think between words
(screens/arming.py): a key where a word begins never answers on its own, however long the quiet
around it. A corpus with log-normal think pauses (think_corpus.py: pauses of several seconds,
lone `y` `n` `a` `1` `2` `3` words) runs through the pure state machine (thousands of sentences)
and through every kind of dialog on the running app: 0 decisions, 0 lost keys."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.screens.armed import TICK_S, ArmedModal
from cerveau_tui.app.screens.arming import ALONE_AFTER_TYPING_S, ALONE_S, QUIET_S, Arming, Keystroke
from cerveau_tui.app.screens.gate import GateScreen
from cerveau_tui.app.screens.rewind import RewindPreview, RewindScreen, TurnRow
from cerveau_tui.app.screens.trust import TrustScreen

from .helpers import AskInThread, FakeClock, arm, viewer_app, wait_until
from .test_deliberate import _submitted_hook
from .think_corpus import DECISIVE, Timed, sentence, typed

Y, SPACE = Keystroke("y", "y"), Keystroke("space", " ")


# --- the state machine, thousands of sentences ------------------------------------------------


def _run(arming: Arming, clock: FakeClock, keys: list[Timed], counts: dict[str, int]) -> bool:
    """Type `keys` into a dialog, its timer ticking between them; True when every key reached
    the prompt in order. Counts decisions, keys held and proposed, long pauses."""
    replayed: list[Keystroke] = []
    for k in keys:
        counts["long pauses"] += k.gap >= 3.0
        counts["max pause ms"] = max(counts["max pause ms"], int(k.gap * 1000))
        end = clock.t + k.gap
        while clock.t + TICK_S < end:  # the screen's timer, between two keys
            clock.advance(TICK_S)
            before = arming.proposed
            counts["decisions"] += arming.answer() is not None
            counts["proposed"] += arming.proposed is not None and before is None
            if arming.due():
                arming.arm(arming.generation)
        clock.t = end
        before = arming.proposed
        got = arming.press(k.stroke, k.stroke.key in DECISIVE)
        # A key that begins a word is proposed at the press (issue 33), others held.
        counts["proposed"] += arming.proposed is not None and before is None
        counts["held"] += not got
        replayed += got
    for _ in range(int(2.0 / TICK_S)):  # quiet after Enter
        clock.advance(TICK_S)
        counts["decisions"] += arming.answer() is not None
        if arming.due():
            arming.arm(arming.generation)
    return replayed == [k.stroke for k in keys]


def _counts() -> dict[str, int]:
    return dict.fromkeys(("decisions", "held", "proposed", "long pauses", "max pause ms"), 0)


def test_think_pauses_decide_nothing_in_a_fresh_dialog_per_sentence() -> None:
    # The measure: each sentence arrives 0-10 s after a dialog opens.
    rng, clock, counts = random.Random(2121), FakeClock(), _counts()
    sentences, lost, keys, lone = 3000, 0, 0, 0
    for _ in range(sentences):
        arming = Arming(clock)
        clock.advance(rng.uniform(0.0, 10.0))
        if arming.due():
            arming.arm(arming.generation)
        text = sentence(rng)
        lone += sum(w in {"y", "n", "a", "1", "2", "3"} for w in text.split())
        strokes = typed(rng, text)
        keys += len(strokes)
        lost += not _run(arming, clock, strokes, counts)
    print(
        f"\nthink pauses, a fresh dialog each: {sentences} sentences, {keys} keys, {lone} lone "
        f"y/n/a/1/2/3 words, {counts['long pauses']} pauses >= 3 s (longest "
        f"{counts['max pause ms'] / 1000:.1f} s), {counts['held']} keys held, "
        f"{counts['proposed']} proposed: {counts['decisions']} decisions, {lost} sentences with a "
        "lost or reordered key"
    )
    assert counts["long pauses"] > 500 and lone > 1000 and counts["proposed"] > 100
    assert counts["decisions"] == 0 and lost == 0


def test_think_pauses_decide_nothing_in_a_dialog_open_for_minutes() -> None:
    # One dialog, twenty sentences in a row (each sent with Enter): however long it is open.
    rng, clock, counts = random.Random(77), FakeClock(), _counts()
    lost = 0
    for _ in range(150):
        arming = Arming(clock)
        for _ in range(20):
            clock.advance(rng.uniform(0.0, 10.0))
            if arming.due():
                arming.arm(arming.generation)
            lost += not _run(arming, clock, typed(rng, sentence(rng)), counts)
    print(
        f"\nthink pauses, 150 dialogs x 20 sentences: {counts['held']} keys held, "
        f"{counts['proposed']} proposed, {counts['decisions']} decisions, {lost} lost"
    )
    assert counts["proposed"] > 100
    assert counts["decisions"] == 0 and lost == 0


def _armed(clock: FakeClock, *typed_first: Keystroke) -> Arming:
    arming = Arming(clock)
    for stroke in typed_first:
        arming.press(stroke, decisive=stroke.key in DECISIVE)
    clock.advance(QUIET_S)
    assert arming.due() and arming.arm(arming.generation)
    return arming


def test_a_y_after_a_space_and_ten_seconds_of_quiet_is_only_proposed() -> None:
    clock = FakeClock()
    arming = Arming(clock)
    arming.press(Keystroke("f", "f"), decisive=False)
    arming.press(SPACE, decisive=False)
    clock.advance(10.0)
    assert arming.due() and arming.arm(arming.generation)
    assert arming.press(Y, decisive=True) == []
    clock.advance(10.0)
    assert arming.answer() is None and arming.proposed == Y and not arming.armed


def test_another_key_after_a_proposal_types_both_in_order() -> None:
    clock = FakeClock()
    arming = _armed(clock, Keystroke("f", "f"), SPACE)
    arming.press(Y, decisive=True)
    clock.advance(ALONE_AFTER_TYPING_S)
    assert arming.answer() is None and arming.proposed == Y
    clock.advance(8.0)
    assert arming.press(SPACE, decisive=False) == [Y, SPACE]
    assert arming.proposed is None and arming.held is None


def test_the_same_key_again_alone_answers_a_proposal() -> None:
    clock = FakeClock()
    arming = _armed(clock, Keystroke("f", "f"), SPACE)
    arming.press(Y, decisive=True)
    clock.advance(ALONE_AFTER_TYPING_S)
    assert arming.answer() is None
    clock.advance(QUIET_S)  # the proposal is drawn and the dialog arms again
    assert arming.due() and arming.arm(arming.generation)
    assert arming.press(Y, decisive=True) == []
    clock.advance(ALONE_AFTER_TYPING_S)
    assert arming.answer() == Y and arming.proposed is None


def test_the_same_key_again_then_typing_is_typing_all_three() -> None:
    clock = FakeClock()
    arming = _armed(clock, Keystroke("f", "f"), SPACE)
    arming.press(Y, decisive=True)
    clock.advance(ALONE_AFTER_TYPING_S)
    arming.answer()
    clock.advance(QUIET_S)
    arming.arm(arming.generation)
    arming.press(Y, decisive=True)
    clock.advance(0.1)
    assert arming.press(SPACE, decisive=False) == [Y, Y, SPACE]


def test_a_key_into_a_prompt_emptied_by_enter_is_proposed() -> None:
    # A sentence was sent while the dialog was up: the next key begins the next sentence.
    clock = FakeClock()
    arming = _armed(clock, Keystroke("o", "o"), Keystroke("k", "k"), Keystroke("enter"))
    arming.press(Keystroke("n", "n"), decisive=True)
    clock.advance(ALONE_AFTER_TYPING_S)
    assert arming.answer() is None and arming.proposed == Keystroke("n", "n")


def test_a_key_after_a_words_last_letter_still_answers() -> None:
    # "say hi", a stop, then `y`: the person stopped typing to answer (the rule before).
    clock = FakeClock()
    arming = _armed(clock, Keystroke("h", "h"), Keystroke("i", "i"))
    arming.press(Y, decisive=True)
    clock.advance(ALONE_AFTER_TYPING_S)
    assert arming.answer() == Y


def test_esc_after_a_space_answers_prose_never_holds_it() -> None:
    clock = FakeClock()
    arming = _armed(clock, Keystroke("f", "f"), SPACE)
    esc = Keystroke("escape")
    arming.press(esc, decisive=True)
    clock.advance(ALONE_AFTER_TYPING_S)
    assert arming.answer() == esc


def test_a_changed_question_hands_back_the_keys_waiting() -> None:
    clock = FakeClock()
    arming = _armed(clock, Keystroke("f", "f"), SPACE)
    arming.press(Y, decisive=True)
    clock.advance(ALONE_S / 2)
    assert arming.drop() == [Y] and arming.held is None


def test_the_prompt_the_keys_go_to_decides_not_the_keys_seen() -> None:
    # A draft typed before the dialog opened, ending in a space: the next key begins a word.
    clock = FakeClock()
    arming = Arming(clock, before_cursor=lambda: " ")
    clock.advance(QUIET_S)
    arming.arm(arming.generation)
    arming.press(Y, decisive=True)
    clock.advance(ALONE_AFTER_TYPING_S)
    assert arming.answer() is None and arming.proposed == Y


# --- every kind of dialog, on the running app --------------------------------------------------


async def _think_into(
    pilot: Any, clock: FakeClock, screen: ArmedModal[Any], sent: list[str], seed: int
) -> list[str]:
    rng, texts, ticks = random.Random(seed), [], 0
    for _ in range(3):
        clock.advance(rng.uniform(0.0, 10.0))
        screen.tick_arming()
        await pilot.pause()
        text = sentence(rng)
        texts.append(text)
        for k in typed(rng, text, pause_p=0.5):
            end = clock.t + k.gap
            while clock.t + TICK_S < end:
                clock.advance(TICK_S)
                screen.tick_arming()
                ticks += 1
                if ticks % 5 == 0:
                    await pilot.pause()
            clock.t = end
            screen.tick_arming()
            await pilot.pause()
            await pilot.press(k.stroke.key)
        for _ in range(20):
            clock.advance(TICK_S)
            screen.tick_arming()
        await pilot.pause()
        assert screen._confirming is None
    await pilot.pause()
    return texts


async def test_think_pauses_into_the_approval_dialog_decide_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock, approval_timeout_s=3600)  # minutes of thinking
    sent: list[str] = []
    async with app.run_test(message_hook=_submitted_hook(sent)) as pilot:
        choices = [("exact:touch /outside/x", "exactly"), ("command:touch", "touch"), ("x", "x")]
        ask = AskInThread(app, summary="touch /o/x", scope="writes under /o", choices=choices)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        texts = await _think_into(pilot, clock, screen, sent, 5)
        assert ask.decision is None and screen.decisions == [] and screen._chosen == {}
        assert sent == texts
        print(f"\napproval dialog: {len(texts)} sentences with think pauses, 0 decisions")


async def test_think_pauses_into_the_done_check_question_decide_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    sent: list[str] = []
    answers: list[Any] = []
    async with app.run_test(message_hook=_submitted_hook(sent)) as pilot:
        screen = GateScreen("pytest -q", clock, app.prompt)
        app.push_screen(screen, answers.append)
        assert await wait_until(pilot, lambda: screen.on_screen)
        texts = await _think_into(pilot, clock, screen, sent, 6)
        assert answers == [] and app.screen is screen and sent == texts


async def test_think_pauses_into_the_trust_dialog_decide_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    sent: list[str] = []
    answers: list[Any] = []
    async with app.run_test(message_hook=_submitted_hook(sent)) as pilot:
        screen = TrustScreen(["sandbox: full-access"], tmp_path / "config.toml", clock, app.prompt)
        app.push_screen(screen, answers.append)
        assert await wait_until(pilot, lambda: screen.on_screen)
        texts = await _think_into(pilot, clock, screen, sent, 7)
        assert answers == [] and app.screen is screen and sent == texts


async def test_think_pauses_into_the_rewind_dialog_decide_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    sent: list[str] = []
    answers: list[Any] = []
    async with app.run_test(message_hook=_submitted_hook(sent)) as pilot:
        preview = RewindPreview(TurnRow(2, "fix it", "10:00", 1), files=1, turns_dropped=1)
        screen = RewindScreen(preview, clock, app.prompt)
        app.push_screen(screen, answers.append)
        assert await wait_until(pilot, lambda: screen.on_screen)
        texts = await _think_into(pilot, clock, screen, sent, 8)
        assert answers == [] and app.screen is screen and sent == texts


async def test_a_draft_ending_in_a_space_asks_for_y_again_then_approves(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        await pilot.press(*"fix", "space")  # typed before the dialog opened
        ask = AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = await arm(pilot, clock)
        await pilot.press("y")
        clock.advance(ALONE_AFTER_TYPING_S)
        screen.tick_arming()
        await pilot.pause()
        assert ask.decision is None and screen.arming.proposed == Y
        screen = await arm(pilot, clock)  # drawn: "y? ... y again, alone, answers"
        assert "y again, alone, answers" in str(screen.query_one("#keys").render())
        await pilot.press("y")
        clock.advance(ALONE_AFTER_TYPING_S)
        screen.tick_arming()
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved"
        assert app.prompt.text == "fix "


async def test_a_proposed_key_reaches_the_prompt_when_the_dialog_closes(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        await pilot.press(*"fix", "space")
        AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = await arm(pilot, clock)
        await pilot.press("y")
        clock.advance(ALONE_AFTER_TYPING_S)
        screen.tick_arming()
        await pilot.pause()
        assert screen.arming.proposed == Y
        screen.drop(str(screen.queue[0]["request_id"]))  # the approver gave up on it
        assert await wait_until(pilot, lambda: app.prompt.text == "fix y")


async def test_a_confirmation_after_a_proposal_takes_its_key_once_more(tmp_path: Path) -> None:
    # A draft ending in a space: `a` is proposed, `a` again answers (the grant's confirmation
    # prompt), and the `a` that prompt asks for is not proposed once more: three presses.
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        await pilot.press(*"fix", "space")
        ask = AskInThread(app, summary="npm install", scope="commands starting with `npm`")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        for _ in range(3):
            screen = await arm(pilot, clock)
            await pilot.press("a")
            clock.advance(ALONE_AFTER_TYPING_S)
            screen.tick_arming()
            await pilot.pause()
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved_session"
        assert app.prompt.text == "fix "
