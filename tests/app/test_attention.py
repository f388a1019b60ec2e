"""Attention (app/attention.py) and the one countdown (loop/approver.py): the person is rung
through the terminal when a dialog waits or a long turn ends, and the only deadline is the
approver's, started when the dialog was shown. What reaches the terminal is read from Textual's
driver, where the app writes it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from cerveau_tui.app.attention import LONG_TURN_S, Attention, sequences
from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.bus import Emitter
from cerveau_tui.loop.approver import ApprovalDecision, ApprovalRequest, BusApprover

from .helpers import AskInThread, FakeClock, press_alone, viewer_app, wait_until

BEL, OSC9, OSC777 = "\x07", "\x1b]9;", "\x1b]777;notify;"


def _capture(app: Any) -> list[str]:
    """What is written to the terminal from now on that is not Textual's own drawing (it sets
    the pointer shape with an OSC 22 of its own): the writes that carry a notification."""
    written: list[str] = []
    driver_write = app._driver.write

    def write(text: str) -> None:
        if BEL in text and "\x1b]22;" not in text:
            written.append(text)
        driver_write(text)

    app._driver.write = write  # the terminal, as Textual's driver is given it
    return written


async def test_a_waiting_approval_writes_the_bell_and_both_notifications(tmp_path: Path) -> None:
    app = viewer_app(tmp_path, FakeClock())
    async with app.run_test() as pilot:
        written = _capture(app)
        AskInThread(app, tool="bash", summary="rm -rf build")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert await wait_until(pilot, lambda: bool(written))
        raw = "".join(written)
        assert raw.startswith(BEL) and OSC9 in raw and OSC777 in raw
        assert "approval needed: bash" in raw


async def test_a_question_says_so(tmp_path: Path) -> None:
    app = viewer_app(tmp_path, FakeClock())
    async with app.run_test() as pilot:
        written = _capture(app)
        AskInThread(app, tool="question", summary="which branch?")
        assert await wait_until(pilot, lambda: bool(written))
        assert "a question for you" in "".join(written)


async def test_notify_false_writes_nothing(tmp_path: Path) -> None:
    app = viewer_app(tmp_path, FakeClock(), notify=False)
    async with app.run_test() as pilot:
        written = _capture(app)
        AskInThread(app)
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.pause(0.2)
        assert written == []


async def test_each_request_rings_once_when_it_reaches_the_screen(tmp_path: Path) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        written = _capture(app)
        first = AskInThread(app, summary="make build", call_id="c1")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        AskInThread(app, summary="make deploy", call_id="c2")
        assert await wait_until(pilot, lambda: len(screen.queue) == 2)
        await pilot.pause()
        assert len(written) == 1  # the queued one waits unseen: no ring yet
        await press_alone(pilot, clock, "y")
        first.thread.join(5)
        assert await wait_until(pilot, lambda: len(written) == 2)


def test_model_text_cannot_end_the_sequence_early() -> None:
    # a tool name or summary from the model carrying its own ESC/BEL (OSC 52 writes the clipboard)
    raw = sequences("cerveau", "approval needed: x\x07\x1b]52;c;ZXZpbA==\x07; rm")
    assert raw.count("\x1b") == 2 and raw.count(BEL) == 3  # only our own three sequences
    assert "]52;" not in raw.replace("\x1b]52", "")  # the text stays, inert
    assert raw.split(OSC777, 1)[1].count(";") == 1  # title;body, nothing more


def test_a_turn_longer_than_a_minute_rings_at_its_end_a_short_one_does_not() -> None:
    clock, written = FakeClock(), []
    attention = Attention(written.append, clock, lambda: True)
    attention.turn_started()
    clock.advance(LONG_TURN_S - 1)
    attention.turn_ended()
    assert written == []
    attention.turn_started()
    clock.advance(LONG_TURN_S + 12)
    attention.turn_ended()
    assert len(written) == 1 and "turn ended after 1 min 12 s" in written[0]


# --- one countdown ---------------------------------------------------------------------------------


def _ask(approver: BusApprover, rid: str) -> tuple[threading.Thread, list[ApprovalDecision]]:
    out: list[ApprovalDecision] = []
    req = ApprovalRequest(call_id=rid, tool="bash", summary="x", reason="r", request_id=rid)
    thread = threading.Thread(target=lambda: out.append(approver.approve(req)), daemon=True)
    thread.start()
    return thread, out


def _until(cond: Any) -> bool:
    event = threading.Event()
    for _ in range(200):
        if cond():
            return True
        event.wait(0.02)
    return cond()


def test_the_countdown_starts_when_the_person_is_notified() -> None:
    clock = FakeClock()
    approver = BusApprover(Emitter(), timeout_s=120, clock=clock)
    thread, out = _ask(approver, "r1")
    assert _until(lambda: approver.pending == ["r1"])
    clock.advance(100)  # the dialog was queued, or the UI slow: nobody saw it yet
    approver.notified("r1")
    assert approver.seconds_left("r1") == 120
    clock.advance(119)
    assert approver.seconds_left("r1") == 1 and out == []
    clock.advance(2)
    thread.join(5)
    assert out and (out[0].decision, out[0].by) == ("denied", "timeout")
    assert approver.seconds_left("r1") is None


def test_a_request_nobody_shows_is_still_denied_after_the_timeout() -> None:
    clock = FakeClock()
    approver = BusApprover(Emitter(), timeout_s=30, clock=clock)
    thread, out = _ask(approver, "r1")
    assert _until(lambda: approver.pending == ["r1"])
    clock.advance(31)
    thread.join(5)
    assert out and out[0].by == "timeout"


async def test_the_dialog_shows_the_approvers_countdown_and_keeps_none_of_its_own(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock, approval_timeout_s=60)
    async with app.run_test() as pilot:
        first = AskInThread(app, summary="make build", call_id="c1")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        second = AskInThread(app, summary="make deploy", call_id="c2")
        assert await wait_until(pilot, lambda: len(screen.queue) == 2)
        clock.advance(50)
        screen.tick()
        assert "denies automatically in 10 s" in str(screen.query_one("#countdown").render())
        await press_alone(pilot, clock, "y")
        first.thread.join(5)
        # the second was queued unseen for 50 s: its minute starts now that it is on screen
        assert await wait_until(pilot, lambda: screen.current is not None)
        rid = second.req.request_id
        assert await wait_until(pilot, lambda: app.approver.seconds_left(rid) == 60)
        screen.tick()
        assert "denies automatically in 60 s" in str(screen.query_one("#countdown").render())


async def test_the_end_of_a_turn_longer_than_a_minute_rings_through_the_terminal(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock)
    async with app.run_test() as pilot:
        written = _capture(app)
        app.bus.emit("turn_started", {"input": "quick"})
        app.bus.emit("turn_ended", {"reason": "completed", "iterations": 1})
        await pilot.pause(0.2)
        assert written == []  # a short turn was watched
        app.bus.emit("turn_started", {"input": "refactor the parser"})
        assert await wait_until(pilot, lambda: app.attention._turn_started is not None)
        clock.advance(LONG_TURN_S + 5)
        app.bus.emit("turn_ended", {"reason": "completed", "iterations": 9})
        assert await wait_until(pilot, lambda: bool(written))
        assert OSC9 in written[0] and "turn ended after 1 min 5 s" in written[0]


def test_under_tmux_the_notifications_also_go_through_its_passthrough() -> None:
    raw = sequences("cerveau", "approval needed: bash", tmux=True)
    assert raw.startswith(BEL + OSC9)  # plain first: a terminal outside tmux reads these
    wrapped = "\x1bPtmux;\x1b\x1b]9;cerveau: approval needed: bash\x07\x1b\\"
    assert wrapped in raw and "\x1bPtmux;\x1b\x1b]777;notify;cerveau;" in raw
