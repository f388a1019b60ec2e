"""`A`, alone and confirmed by `A` again, answers "always in this workspace" (a lasting rule)."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.screens.approval import ApprovalScreen

from .helpers import AskInThread, FakeClock, arm, press_alone, viewer_app, wait_until


async def test_shift_a_twice_approves_always(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app, summary="pytest -q", scope="commands starting with `pytest`")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "A")
        assert ask.decision is None  # the first `A` only asks for the confirmation
        await arm(pilot, clock)
        assert "ALWAYS allow in this workspace" in str(app.screen.query_one("#keys").render())
        await press_alone(pilot, clock, "A")
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved_always"
