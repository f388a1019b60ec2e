"""The done check is a step the person sees (issue 33): while it runs the status bar names the
command, its elapsed time and how to stop it; the chat says it started; its result is a chat
line, red as loudly as green. Pilot tests fed the engine's events; the clock is injected."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine
from cerveau_tui.app.widgets.status_bar import StatusBar

from .helpers import FakeClock, viewer_app, wait_until

CMD = "python -m pytest -q"


def notices(app) -> list[NoticeLine]:  # type: ignore[no-untyped-def]
    return list(app.query_one(ChatView).query(NoticeLine))


async def test_the_status_bar_names_the_running_check_its_time_and_the_stop(tmp_path: Path) -> None:
    clock = FakeClock(100.0)
    app = viewer_app(tmp_path, clock=clock)
    async with app.run_test(size=(140, 45)) as pilot:
        bar = app.query_one(StatusBar)
        bar.clock = clock
        app.bus.emit("turn_started", {"input": "fix it"})
        app.bus.emit("check_started", {"command": CMD, "precheck": True})
        assert await wait_until(pilot, lambda: bar.state.check_started is not None)
        clock.advance(12)
        bar._tick()
        want = f"check {CMD} 12s · Esc Esc stops it"
        assert await wait_until(pilot, lambda: want in bar.render().plain)  # type: ignore[union-attr]


async def test_the_status_bar_drops_the_check_when_its_result_comes(tmp_path: Path) -> None:
    clock = FakeClock(100.0)
    app = viewer_app(tmp_path, clock=clock)
    async with app.run_test(size=(140, 45)) as pilot:
        bar = app.query_one(StatusBar)
        bar.clock = clock
        app.bus.emit("turn_started", {"input": "fix it"})
        app.bus.emit("check_started", {"command": CMD, "precheck": True})
        app.bus.emit("check", {"precheck": True, "command": CMD, "state": "passed"})
        assert await wait_until(pilot, lambda: bar.state.check_started is None)
        assert "Esc Esc stops it" not in bar.render().plain  # type: ignore[union-attr]


async def test_the_chat_says_the_check_started(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(140, 45)) as pilot:
        app.bus.emit("turn_started", {"input": "fix it"})
        app.bus.emit("check_started", {"command": CMD, "precheck": True})
        assert await wait_until(
            pilot, lambda: any(CMD in n.text and "Esc Esc" in n.text for n in notices(app))
        )


async def test_a_red_check_is_an_error_line_naming_the_failing_tests(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    red = {
        "precheck": True,
        "command": CMD,
        "state": "failed",
        "failing": ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"],
        "failed": 2,
        "unmet": ["tests"],
    }
    async with app.run_test(size=(140, 45)) as pilot:
        app.bus.emit("turn_started", {"input": "fix it"})
        app.bus.emit("check", red)

        def line() -> NoticeLine | None:
            return next((n for n in notices(app) if "check failed" in n.text), None)

        assert await wait_until(pilot, lambda: line() is not None)
        shown = line()
        assert shown is not None and shown.has_class("-error")
        assert "2 failing: tests/test_calc.py::test_add, tests/test_calc.py::test_sub" in shown.text
