"""While the model works the person sees it move: a spinner with the round's elapsed time (on an
injected clock), the prompt read, the tokens so far, and the call being written in its card."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.status_bar import StatusBar, StatusState, status_content
from cerveau_tui.app.widgets.tool_card import DraftCard, ToolCard, draft_summary
from cerveau_tui.protocol import ReplyProgress

from .helpers import FakeClock, viewer_app, wait_until

WRITING = {
    "tool_name": "write_file",
    "tool_chars": 1400,
    "tool_head": '{"path": "parser.py", "content": "def parse(',
    "tokens": 350,
}


def test_a_call_being_written_reads_as_its_tool_target_and_size() -> None:
    assert draft_summary(ReplyProgress(**WRITING)) == "write_file parser.py … 1.4k chars"
    cmd = ReplyProgress(tool_name="bash", tool_chars=12, tool_head='{"command": "pytest -q')
    assert draft_summary(cmd) == "bash pytest -q … 12 chars"
    assert draft_summary(ReplyProgress(tool_name="list_files")) == "list_files …"


def test_the_running_phase_shows_a_spinner_and_the_rounds_elapsed_time() -> None:
    s = StatusState(phase="running", round_started=100.0, activity="312 tok")
    text = status_content(s, now=172.0).plain
    assert "running 1m12s │ sandbox: ? │ 312 tok" in text
    assert status_content(s, now=100.0).plain[0] != status_content(s, now=100.3).plain[0]


async def status_text(pilot, bar: StatusBar, want: str) -> bool:
    return await wait_until(pilot, lambda: want in bar.render().plain)  # type: ignore[union-attr]


async def test_the_status_bar_follows_a_round_from_prompt_to_tokens(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(140, 45)) as pilot:
        bar = app.query_one(StatusBar)
        clock = FakeClock(500.0)
        bar.clock = clock
        app.bus.emit("turn_started", {"input": "write a parser"})
        app.bus.emit("iteration_started", {"iteration": 1})
        assert await status_text(pilot, bar, "running 0s │ sandbox: ? │ processing prompt…")
        clock.advance(12)
        app.bus.emit("reply_progress", {"prompt_done": 1200, "prompt_total": 4000})
        assert await status_text(pilot, bar, "running 12s │ sandbox: ? │ prompt 1,200/4,000")
        app.bus.emit("reply_progress", {"tokens": 48})
        assert await status_text(pilot, bar, "│ 48 tok")
        clock.advance(60)
        bar._tick()
        assert await status_text(pilot, bar, "running 1m12s")


async def test_a_call_streams_into_a_card_that_its_real_card_replaces(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(140, 45)) as pilot:
        chat = app.query_one(ChatView)
        bar = app.query_one(StatusBar)
        app.bus.emit("turn_started", {"input": "write a parser"})
        app.bus.emit("reply_progress", {**WRITING, "tool_chars": 200})
        assert await wait_until(pilot, lambda: len(chat.query(DraftCard)) == 1)
        app.bus.emit("reply_progress", WRITING)
        draft = chat.query_one(DraftCard)
        assert await wait_until(pilot, lambda: "parser.py … 1.4k chars" in str(draft.render()))
        assert await status_text(pilot, bar, "write_file parser.py … 1.4k chars")
        app.bus.emit(
            "tool_call",
            {"call_id": "c1", "name": "write_file", "arguments": {"path": "parser.py"}},
        )
        assert await wait_until(pilot, lambda: len(chat.query(ToolCard)) == 1)
        assert await wait_until(pilot, lambda: len(chat.query(DraftCard)) == 0)
