"""Snapshot of an approval dialog at 80x24 holding a proposed key (screens/arming.py): `y` was
pressed where a word begins (a draft ending in a space in the prompt), so the keys line asks for
it again, alone, on one line. Same rules as test_snapshots.py: a frozen clock, fixed size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.screens.arming import ALONE_AFTER_TYPING_S

from .helpers import AskInThread, FakeClock, arm, viewer_app, wait_until


def test_a_proposed_y_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    clock = FakeClock()
    app = viewer_app(tmp_path / "ws", clock)
    app.animation_level = "none"

    async def run_before(pilot: Any) -> None:
        await pilot.press(*"fix", "space")
        AskInThread(app, summary="npm install", scope="commands starting with `npm`")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = await arm(pilot, clock)
        await pilot.press("y")
        clock.advance(ALONE_AFTER_TYPING_S)
        screen.tick_arming()
        await pilot.pause()
        await arm(pilot, clock)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
