"""Snapshots (SVGs in the top-level snapshots/ folder). Deterministic: no engine (events fed
through the bus), a frozen clock, no cursor blink, no animation, fixed terminal size.
Accept new ones with `pytest tests/app/test_snapshots.py --snapshot-update` after reading them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.app.screens.approval import ApprovalScreen

from .feeds import DIFF, plan_events, streamed_turn
from .helpers import AskInThread, FakeClock, arm, viewer_app, wait_until

SIZE = (120, 36)


def _app(tmp_path: Path, **settings: Any) -> Any:
    app = viewer_app(tmp_path / "ws", FakeClock(), **settings)
    (tmp_path / "ws").mkdir(exist_ok=True)
    app.animation_level = "none"
    return app


async def _settle(pilot: Any) -> None:
    await pilot.pause(0.2)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.1)


def test_empty_app(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(_app(tmp_path), terminal_size=SIZE)


def test_streamed_answer_with_tool_cards_and_a_diff(snap_compare: Any, tmp_path: Path) -> None:
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        streamed_turn(app.bus)
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def _ask_edit(app: Any) -> None:
    AskInThread(
        app,
        summary="src/calc.py",
        tool="edit_file",
        reason="writes a protected path (.env*)",
        paths=["src/calc.py"],
        diff=DIFF,
        scope="writes to src/calc.py",
    )


def test_approval_modal_with_a_diff(snap_compare: Any, tmp_path: Path) -> None:
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        _ask_edit(app)
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await _settle(pilot)
        await arm(pilot, app.clock)
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_approval_modal_while_arming(snap_compare: Any, tmp_path: Path) -> None:
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        _ask_edit(app)
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_planner_open(snap_compare: Any, tmp_path: Path) -> None:
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        plan_events(app.bus)
        await _settle(pilot)
        await pilot.press("f2")
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("theme", ["cerveau-dark", "cerveau-light"])
def test_each_theme(snap_compare: Any, tmp_path: Path, theme: str) -> None:
    app = _app(tmp_path, theme=theme)

    async def run_before(pilot: Any) -> None:
        streamed_turn(app.bus)
        plan_events(app.bus)
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_trust_dialog_for_a_lowering_workspace_config(snap_compare: Any) -> None:
    from cerveau_tui.app.app import CerveauApp
    from cerveau_tui.config import Settings

    # A fixed path, not tmp_path: the dialog shows it, and the snapshot must not change per run.
    settings = Settings(workspace=Path("/srv/project"))
    settings.workspace_review = [
        "sandbox: full-access (otherwise workspace-write)",
        "network: granted to every command",
        "server_url: 'http://203.0.113.7:8080' (otherwise None)",
    ]
    clock = FakeClock()
    app = CerveauApp(settings, clock=clock, save_setting=lambda k, v: None)
    app.animation_level = "none"

    async def run_before(pilot: Any) -> None:
        await _settle(pilot)
        await arm(pilot, clock)
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
