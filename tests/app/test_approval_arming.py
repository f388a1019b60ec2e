"""Arming (screens/armed.py): a dialog that pops up while the person types answers nothing until
the keyboard has been quiet, and what they typed reaches the prompt. Against the real BusApprover;
the clock is injected and moved by hand; `tick()` is what the screen's timer calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.message import Message

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.screens.armed import ARMING_TEXT, QUIET_S, Arming, Keystroke
from cerveau_tui.app.widgets.prompt import PromptInput

from .helpers import AskInThread, FakeClock, arm, press_alone, viewer_app, wait_until


async def _dialog(pilot: Any) -> ApprovalScreen:
    def shown() -> bool:
        screen = pilot.app.screen
        return isinstance(screen, ApprovalScreen) and screen.on_screen

    assert await wait_until(pilot, shown)
    screen = pilot.app.screen
    assert isinstance(screen, ApprovalScreen)
    return screen


async def _type_steadily(pilot: Any, clock: FakeClock, screen: ApprovalScreen, text: str) -> None:
    """A key every 0.2 s, the screen's timer ticking in between, as a person typing would be."""
    for ch in text:
        clock.advance(0.2)
        screen.tick()
        await pilot.pause()
        await pilot.press("space" if ch == " " else ch)


def _keys_line(screen: ApprovalScreen) -> str:
    return str(screen.query_one("#keys").render())


async def test_typing_on_while_the_dialog_appears_decides_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        screen = await _dialog(pilot)
        # 1.2 s in all, past any fixed grace period; `y` comes 0.6 s after the dialog appeared
        await _type_steadily(pilot, clock, screen, "say hi")
        await pilot.pause()
        assert ask.decision is None and app.approver.pending == [ask.req.request_id]
        assert screen.decisions == [] and not screen.armed


async def test_letters_typed_while_arming_reach_the_prompt_in_order(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        await pilot.press(*"sa")
        AskInThread(app)
        screen = await _dialog(pilot)
        await _type_steadily(pilot, clock, screen, "y hi")
        await pilot.pause()
        assert app.prompt.text == "say hi"


async def test_after_quiet_y_approves_once(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        screen = await _dialog(pilot)
        await _type_steadily(pilot, clock, screen, "say hi")
        await press_alone(pilot, clock, "y")
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved"
        assert [d.decision for _, d in screen.decisions] == ["approved"]


async def test_a_key_restarts_the_quiet_period(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        screen = (AskInThread(app), await _dialog(pilot))[1]
        clock.advance(0.4)
        await pilot.press("x")
        clock.advance(QUIET_S - 0.1)  # 1.0 s after the dialog appeared, 0.5 s after the key
        screen.tick()
        await pilot.pause()
        assert not screen.armed and _keys_line(screen) == ARMING_TEXT
        clock.advance(0.1)  # QUIET_S after the key
        screen.tick()
        assert await wait_until(pilot, lambda: screen.armed)


async def test_the_arming_line_is_shown_then_replaced_by_the_keys(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        AskInThread(app)
        screen = await _dialog(pilot)
        assert _keys_line(screen) == ARMING_TEXT
        await arm(pilot, clock)
        assert "y approve once" in _keys_line(screen)
        assert "arming" not in _keys_line(screen)


async def test_the_next_request_in_the_queue_re_arms(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        first = AskInThread(app, summary="make build", call_id="c1")
        screen = await _dialog(pilot)
        second = AskInThread(app, summary="make deploy", call_id="c2")
        assert await wait_until(pilot, lambda: len(screen.queue) == 2)
        await press_alone(pilot, clock, "y")
        first.thread.join(5)
        assert not screen.armed and _keys_line(screen) == ARMING_TEXT
        await pilot.press("y")
        await pilot.pause()
        assert second.decision is None and app.prompt.text == "y"


async def test_escape_while_arming_does_nothing_to_the_dialog(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        screen = await _dialog(pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert ask.decision is None and app.screen is screen


async def test_backspace_while_arming_edits_the_prompt(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        await pilot.press(*"fix")
        AskInThread(app)
        await _dialog(pilot)
        await pilot.press("backspace", "g")
        await pilot.pause()
        assert app.prompt.text == "fig"


async def test_enter_while_arming_sends_the_prompt(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    sent: list[PromptInput.Submitted] = []

    def hook(message: Message) -> None:
        # the hook sees a message at each node it bubbles through: keep each one once
        if isinstance(message, PromptInput.Submitted) and all(m is not message for m in sent):
            sent.append(message)

    async with app.run_test(message_hook=hook) as pilot:
        ask = AskInThread(app)
        await _dialog(pilot)
        await pilot.press(*"stop", "enter")
        await pilot.pause()
        assert [m.text for m in sent] == ["stop"] and app.prompt.text == ""
        assert ask.decision is None


def test_a_key_between_drawing_the_keys_and_arming_voids_the_arming() -> None:
    clock = FakeClock()
    arming = Arming(clock)
    clock.advance(QUIET_S)
    assert arming.due()
    scheduled = arming.generation  # the keys are drawn; arming waits for the refresh
    x = Keystroke("x", "x")
    assert arming.press(x, decisive=False) == [x]  # a key arrives first: it is typing
    assert arming.arm(scheduled) is False and not arming.armed
