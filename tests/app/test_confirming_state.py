"""One "confirming" state (issue 33): a key pressed where a word begins showed "y… confirming",
then flipped to "y? you were typing" once its quiet-after passed. The state drawn at the press
is the one that holds (screens/arming.py, screens/armed.py)."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.screens.arming import ALONE_AFTER_TYPING_S, QUIET_S, Arming, Keystroke

from .helpers import AskInThread, FakeClock, arm, viewer_app, wait_until

Y = Keystroke("y", "y")


def test_a_key_where_a_word_begins_is_proposed_at_the_press() -> None:
    clock = FakeClock()
    arming = Arming(clock, before_cursor=lambda: " ")
    clock.advance(QUIET_S)
    arming.arm(arming.generation)
    assert arming.press(Y, decisive=True) == []
    assert arming.proposed == Y and arming.held is None


def test_the_same_key_again_answers_a_proposal_before_the_dialog_arms_again() -> None:
    # The line on screen says "y again, alone, answers" from the first press on.
    clock = FakeClock()
    arming = Arming(clock, before_cursor=lambda: " ")
    clock.advance(QUIET_S)
    arming.arm(arming.generation)
    arming.press(Y, decisive=True)
    clock.advance(QUIET_S / 2)
    assert arming.press(Y, decisive=True) == []
    clock.advance(ALONE_AFTER_TYPING_S)
    assert arming.answer() == Y


async def test_the_keys_line_drawn_at_the_press_is_the_one_after_the_quiet(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        await pilot.press(*"fix", "space")  # the next key begins a word
        ask = AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = await arm(pilot, clock)
        await pilot.press("y")
        await pilot.pause()
        first = str(screen.query_one("#keys").render())
        clock.advance(ALONE_AFTER_TYPING_S + QUIET_S)
        screen.tick_arming()
        await pilot.pause()
        later = str(screen.query_one("#keys").render())
        assert "y again, alone, answers" in first and "confirming" not in first
        assert first.splitlines()[0] == later.splitlines()[0]
        assert ask.decision is None
