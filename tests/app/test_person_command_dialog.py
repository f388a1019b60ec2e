"""The person's own `!cmd` when it needs a yes (issue 33): while its dialog waits the status bar
says so (it said "ready"), and Esc on it says the command was not run (it said "the person
stopped the turn", when no turn ran)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.widgets.status_bar import StatusBar
from cerveau_tui.app.widgets.tool_card import ToolCard
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, arm, engine_app, press_alone, wait_until


def _status(app: Any) -> str:
    return str(app.screen_stack[0].query_one(StatusBar).render())


async def _bang_outside(tmp_path: Path, then: Any) -> Any:
    """`!touch` a file outside the workspace (asked under on-request); `then(pilot, app, clock)`
    runs while its dialog is up. Returns the recorder."""
    out = Path(tempfile.mkdtemp(prefix="cerveau-bang-", dir="/var/tmp"))
    try:
        clock = FakeClock()
        with ScriptedServer({"responses": [{"content": "unused"}]}) as srv:
            app, rec = engine_app(
                tmp_path, srv.url, clock, approval="on-request", sandbox="workspace-write"
            )
            async with app.run_test(size=(140, 45)) as pilot:
                assert await wait_until(pilot, lambda: app.runner.session is not None)
                await pilot.press(*f"!touch {out}/a", "enter")
                assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
                await then(pilot, app, clock)
                await pilot.press("ctrl+q")
        return rec
    finally:
        shutil.rmtree(out, ignore_errors=True)


async def test_the_status_bar_says_it_waits_for_the_person_during_a_bang_dialog(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    async def look(pilot: Any, app: Any, clock: FakeClock) -> None:
        await arm(pilot, clock)
        await pilot.pause()
        seen.append(_status(app))
        await press_alone(pilot, clock, "y")  # answered: the waiting goes
        assert await wait_until(pilot, lambda: "waiting" not in _status(app))

    await _bang_outside(tmp_path, look)
    assert "waiting for your answer" in seen[0] and "ready" not in seen[0]


async def test_esc_on_a_bang_dialog_says_the_command_was_not_run(tmp_path: Path) -> None:
    cards: list[str] = []

    async def stop(pilot: Any, app: Any, clock: FakeClock) -> None:
        await press_alone(pilot, clock, "escape")
        assert await wait_until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))
        assert await wait_until(pilot, lambda: not app.busy)
        await pilot.pause(0.2)
        cards.extend(str(c.render()) + " " + str(c.title) for c in app.query(ToolCard))

    rec = await _bang_outside(tmp_path, stop)
    result = rec.of("tool_result")[0].payload
    shown = " ".join(cards) + " " + str(result)
    assert "stopped the turn" not in shown
    assert "not run" in str(result.get("output", ""))


async def test_a_bang_command_stopped_at_its_dialog_is_not_told_to_the_model_as_run(
    tmp_path: Path,
) -> None:
    told: list[str] = []

    async def stop(pilot: Any, app: Any, clock: FakeClock) -> None:
        await press_alone(pilot, clock, "escape")
        assert await wait_until(pilot, lambda: not app.busy)
        history = app.runner.session.engine.loop_state.history
        assert await wait_until(pilot, lambda: len(history) > 0)
        told.append(history.messages[-1].content)

    await _bang_outside(tmp_path, stop)
    assert told[0].startswith("I stopped `touch ") and "I ran" not in told[0]


async def test_a_bang_dialog_says_esc_leaves_it_not_run_not_that_it_stops_a_turn(
    tmp_path: Path,
) -> None:
    keys: list[str] = []

    async def look(pilot: Any, app: Any, clock: FakeClock) -> None:
        screen = await arm(pilot, clock)
        keys.append(str(screen.query_one("#keys").render()))
        await press_alone(pilot, clock, "escape")

    await _bang_outside(tmp_path, look)
    assert "deny, not run" in keys[0] and "stop the turn" not in keys[0]
