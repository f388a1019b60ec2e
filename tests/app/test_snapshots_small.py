"""Snapshots of the help screen (80x24 and 140x45) and of the 80x24 layout: the planner open, and
an approval dialog over a long diff (issue 15, items 8 and 10). Same rules as test_snapshots.py:
no engine, a frozen clock, no animation, fixed sizes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.screens.help import HelpScreen

from .feeds import plan_events, streamed_turn
from .helpers import AskInThread, FakeClock, arm, viewer_app, wait_until
from .test_small_window import LONG_DIFF

SMALL = (80, 24)
LARGE = (140, 45)


def _app(tmp_path: Path, **settings: Any) -> Any:
    (tmp_path / "ws").mkdir(exist_ok=True)
    app = viewer_app(tmp_path / "ws", FakeClock(), **settings)
    app.animation_level = "none"
    return app


async def _settle(pilot: Any) -> None:
    await pilot.pause(0.2)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.1)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "140x45"])
def test_help_screen(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await _settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_planner_open_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        streamed_turn(app.bus)
        plan_events(app.bus)
        await _settle(pilot)
        await pilot.press("f2")
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


def test_approval_over_a_long_diff_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    app = _app(tmp_path, approval_timeout_s=60)

    async def run_before(pilot: Any) -> None:
        AskInThread(
            app,
            summary="big.py",
            tool="edit_file",
            reason="writes a protected path",
            paths=["big.py"],
            diff=LONG_DIFF,
            scope="writes to big.py",
        )
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await _settle(pilot)
        await arm(pilot, app.clock)
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
