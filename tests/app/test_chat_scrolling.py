"""Scrolling and copying while the prompt has focus (issue 15, item 9): PgUp/PgDn and the wheel
scroll the chat, the chat follows new output unless the person scrolled up, sending jumps to the
bottom, and Ctrl+C copies a selection even during a turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import events
from textual.selection import Selection

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.widgets.entries import NoticeLine

from .helpers import viewer_app, wait_until


async def _long_chat(app: CerveauApp, pilot: Any, lines: int = 80) -> None:
    for i in range(lines):
        app.chat.notice(f"line {i}")
    await pilot.pause()
    assert await wait_until(pilot, lambda: app.chat.max_scroll_y > 20)
    assert await wait_until(pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y)


async def test_page_up_scrolls_the_chat_and_the_prompt_keeps_focus(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _long_chat(app, pilot)
        bottom = app.chat.scroll_y
        await pilot.press("pageup")
        assert await wait_until(pilot, lambda: app.chat.scroll_y < bottom)
        assert app.focused is app.prompt
        await pilot.press("pagedown", "pagedown", "pagedown", "pagedown")
        assert await wait_until(pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y)
        assert app.focused is app.prompt


async def test_the_wheel_over_the_chat_scrolls_it_and_the_prompt_keeps_focus(
    tmp_path: Path,
) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _long_chat(app, pilot)
        bottom = app.chat.scroll_y
        for _ in range(3):
            app.chat.post_message(
                events.MouseScrollUp(
                    app.chat, 5, 5, 0, 0, 0, False, False, False, screen_x=5, screen_y=5
                )
            )
        assert await wait_until(pilot, lambda: app.chat.scroll_y < bottom)
        assert app.focused is app.prompt


async def test_scrolled_up_the_chat_stays_put_and_at_the_bottom_it_follows(
    tmp_path: Path,
) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _long_chat(app, pilot)
        await pilot.press("pageup")
        assert await wait_until(pilot, lambda: app.chat.scroll_y < app.chat.max_scroll_y)
        held = app.chat.scroll_y
        app.chat.notice("new output while the person reads")
        await pilot.pause(0.1)
        assert app.chat.scroll_y == held
        await pilot.press("pagedown", "pagedown", "pagedown", "pagedown")
        assert await wait_until(pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y)
        app.chat.notice("more output")
        assert await wait_until(
            pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y and app.chat.scroll_y > held
        )


async def test_sending_jumps_to_the_bottom(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _long_chat(app, pilot)
        await pilot.press("pageup", "pageup")
        assert await wait_until(pilot, lambda: app.chat.scroll_y < app.chat.max_scroll_y)
        await pilot.press("h", "i", "enter")
        assert await wait_until(pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y)
        app.chat.notice("the answer")
        assert await wait_until(pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y)


class _Runner:
    """Stands in for the session runner: records the interrupt."""

    def __init__(self) -> None:
        self.interrupted = 0
        self.session = None

    def interrupt(self) -> None:
        self.interrupted += 1

    def stop(self) -> bool:
        return True


async def test_ctrl_c_with_a_selection_in_the_prompt_copies_even_during_a_turn(
    tmp_path: Path,
) -> None:
    app = viewer_app(tmp_path)
    runner = _Runner()
    async with app.run_test(size=(80, 24)) as pilot:
        app.runner, app.busy = runner, True  # type: ignore[assignment]
        await pilot.press("k", "e", "e", "p")
        app.prompt.select_all()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "keep"
        assert runner.interrupted == 0
        assert app.prompt.text == "keep"


async def test_ctrl_c_with_a_selection_in_the_chat_copies_even_during_a_turn(
    tmp_path: Path,
) -> None:
    app = viewer_app(tmp_path)
    runner = _Runner()
    async with app.run_test(size=(80, 24)) as pilot:
        app.chat.notice("copy me")
        await pilot.pause()
        app.runner, app.busy = runner, True  # type: ignore[assignment]
        line = app.chat.query(NoticeLine).last()
        app.screen.selections = {line: Selection(None, None)}
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert "copy me" in app.clipboard
        assert runner.interrupted == 0


async def test_ctrl_c_without_a_selection_interrupts_the_turn(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    runner = _Runner()
    async with app.run_test(size=(80, 24)) as pilot:
        app.runner, app.busy = runner, True  # type: ignore[assignment]
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert runner.interrupted == 1
