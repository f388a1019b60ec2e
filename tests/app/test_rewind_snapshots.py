"""Snapshots of rewind (80x24 and 140x45): the list of turns, and the dialog naming a file changed
outside the harness. Same rules as test_snapshots.py: no engine (the screens are given fixed rows
and a fixed preview), a frozen clock, no animation, fixed sizes. Accept new ones with
`pytest tests/app/test_rewind_snapshots.py --snapshot-update` after reading them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.app.screens.rewind import (
    ForwardRow,
    RewindListScreen,
    RewindPreview,
    RewindScreen,
    TurnRow,
)

from .feeds import streamed_turn
from .helpers import FakeClock, arm, viewer_app, wait_until
from .rewind_fakes import TASKS

SIZES = [(80, 24), (140, 45)]
IDS = ["80x24", "140x45"]

ROWS: list[TurnRow | ForwardRow] = [
    TurnRow(1, TASKS[0], "07:10", 1, 12, 0),
    TurnRow(2, TASKS[1], "07:15", 2, 30, 4),
    TurnRow(3, TASKS[2], "07:20", 5, 17, 17, undone=True),
    TurnRow(4, "and a README paragraph on the new config keys", "07:31", 1, 9, 0, undone=True),
    ForwardRow(3, "07:32"),
]

PREVIEW = RewindPreview(
    ROWS[1],  # type: ignore[arg-type]
    files=3,
    turns_dropped=2,
    conflicts=["src/parser.py"],
    changes=["src/cli.py", "src/parser.py", "tests/test_parser.py"],
)


def _app(tmp_path: Path) -> Any:
    (tmp_path / "ws").mkdir(exist_ok=True)
    app = viewer_app(tmp_path / "ws", FakeClock())
    app.animation_level = "none"
    return app


async def _settle(pilot: Any) -> None:
    await pilot.pause(0.2)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.1)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_rewind_list(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        streamed_turn(app.bus)
        await _settle(pilot)
        app.push_screen(RewindListScreen(ROWS, sink=app.prompt))
        await wait_until(pilot, lambda: isinstance(app.screen, RewindListScreen))
        await _settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_rewind_dialog_naming_a_persons_edit(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        streamed_turn(app.bus)
        await _settle(pilot)
        app.push_screen(RewindScreen(PREVIEW, app.clock, app.prompt))
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await _settle(pilot)
        await arm(pilot, app.clock)
        await _settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_rewind_asks_about_the_persons_file_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        app.push_screen(RewindScreen(PREVIEW, app.clock, app.prompt, mode="both"))
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await _settle(pilot)
        await arm(pilot, app.clock)
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZES[0], run_before=run_before)
