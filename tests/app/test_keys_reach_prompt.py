"""Issue 21: typing reaches the prompt whatever has focus, and Ctrl+Q mid-turn asks once."""

from __future__ import annotations

from pathlib import Path

from textual import events

from cerveau_tui.app.screens.quit import QuitScreen
from cerveau_tui.app.widgets.prompt import PromptInput

from .helpers import FakeClock, viewer_app, wait_until


def _tool_call(app, call_id: str = "c1") -> None:
    app.bus.emit("tool_call", {"call_id": call_id, "name": "bash", "arguments": {"command": "ls"}})


async def test_keys_typed_after_tab_moved_focus_land_in_the_prompt(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        _tool_call(app)  # a card whose title takes focus
        await pilot.pause(0.2)
        prompt = app.query_one(PromptInput)
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is not prompt  # the control: Tab really moved it
        await pilot.press(*"fix it")
        await pilot.pause()
        assert prompt.text == "fix it"
        assert app.focused is prompt


async def test_every_tab_stop_gives_typing_back_to_the_prompt(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        for n in range(3):
            _tool_call(app, f"c{n}")
        await pilot.pause(0.2)
        prompt = app.query_one(PromptInput)
        typed = ""
        for stop in range(6):
            await pilot.press(*(["tab"] * (stop + 1)))
            await pilot.press("x")
            await pilot.pause()
            typed += "x"
            assert prompt.text == typed, f"after {stop + 1} tabs"


async def test_a_paste_while_the_chat_has_focus_goes_to_the_prompt(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("tab")
        await pilot.pause()
        prompt = app.query_one(PromptInput)
        assert app.focused is not prompt
        app.post_message(events.Paste("pytest -q"))
        assert await wait_until(pilot, lambda: prompt.text == "pytest -q")


async def test_escape_from_another_widget_brings_focus_back(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("tab")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is app.query_one(PromptInput)


async def test_ctrl_q_mid_turn_asks_once_then_quits(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.busy = True  # a turn is running
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.exiting and app.is_running
        # The question is a screen of its own (issue 33: a chat notice hid under a dialog).
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("ctrl+q")
        assert await wait_until(pilot, lambda: app.exiting)


async def test_a_second_ctrl_q_long_after_the_first_still_quits(tmp_path: Path) -> None:
    # Was: a second press after QUIT_AGAIN_S asked again, a window no text mentioned (issue 33).
    # The question now waits on screen for its answer, however long the person takes.
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        app.busy = True
        await pilot.press("ctrl+q")
        clock.advance(600)
        await pilot.press("ctrl+q")
        assert await wait_until(pilot, lambda: app.exiting)


async def test_ctrl_q_between_turns_quits_at_once(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+q")
        assert await wait_until(pilot, lambda: app.exiting)
