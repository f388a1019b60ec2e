"""The approval modal's keys, arming, timeout and queue, against the real BusApprover (asked from
another thread, as the engine asks it). How arming treats keys typed early: test_approval_arming."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.screens.approval import ApprovalScreen

from .helpers import AskInThread, FakeClock, arm, press_alone, viewer_app, wait_until


async def test_y_approves_once_once_armed(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "y")
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved"
        assert await wait_until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))


async def test_a_approves_for_the_session_and_spells_out_the_scope(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app, summary="npm install", scope="commands starting with `npm install`")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await arm(pilot, clock)
        keys = str(app.screen.query_one("#keys").render())
        assert "approve for this session: commands starting with `npm install`" in keys
        await press_alone(pilot, clock, "a", "a")
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved_session"


async def test_keys_do_not_answer_before_the_dialog_arms(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        clock.advance(0.3)
        await pilot.press("y", "a", "n", "escape")
        await pilot.pause()
        assert ask.decision is None and isinstance(app.screen, ApprovalScreen)
        assert app.approver.pending == [ask.req.request_id]
        await press_alone(pilot, clock, "y")
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "approved"


async def test_n_denies_with_the_reason_typed_before_enter(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "n")
        await pilot.press(*"not yet, a y", "enter")
        ask.thread.join(5)
        assert ask.decision is not None
        assert (ask.decision.decision, ask.decision.reason) == ("denied", "not yet, a y")


async def test_escape_denies_and_stops(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "escape")
        ask.thread.join(5)
        assert ask.decision is not None and ask.decision.decision == "stopped"


async def test_it_denies_when_the_countdown_runs_out(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock, approval_timeout_s=30)
    async with app.run_test() as pilot:
        ask = AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert "denies automatically in 30 s" in str(screen.query_one("#countdown").render())
        clock.advance(31)
        screen.tick()
        ask.thread.join(5)
        assert ask.decision is not None
        assert (ask.decision.decision, ask.decision.by) == ("denied", "timeout")
        assert await wait_until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))


async def test_two_pending_requests_queue_and_both_are_answered(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        first = AskInThread(app, summary="make build", call_id="c1")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        second = AskInThread(app, summary="make deploy", call_id="c2")
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert await wait_until(pilot, lambda: len(screen.queue) == 2)
        assert "(1 of 2)" in str(screen.query_one("#head").render())
        await press_alone(pilot, clock, "y")
        first.thread.join(5)
        # the dialog re-arms for the second request: the same key repeated does nothing
        await pilot.press("n")
        await pilot.pause()
        assert second.decision is None
        assert "make deploy" in str(screen.query_one("#subject").render())
        await press_alone(pilot, clock, "n")
        await pilot.press("enter")
        second.thread.join(5)
        assert first.decision is not None and first.decision.decision == "approved"
        assert second.decision is not None and second.decision.decision == "denied"
        assert await wait_until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))


async def test_a_request_arriving_as_the_dialog_closes_gets_a_dialog_of_its_own(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        first = AskInThread(app, summary="make build", call_id="c1")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await press_alone(pilot, clock, "y")
        second = AskInThread(app, summary="make deploy", call_id="c2")
        first.thread.join(5)

        def showing_second() -> bool:
            screen = app.screen
            return (
                isinstance(screen, ApprovalScreen)
                and (screen.current or {}).get("summary") == "make deploy"
            )

        assert await wait_until(pilot, showing_second)
        await press_alone(pilot, clock, "y")
        second.thread.join(5)
        assert second.decision is not None and second.decision.decision == "approved"
