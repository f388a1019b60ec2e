"""A resumed session is drawn again: its messages and tool cards, never its old dialogs."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.messages import EngineEvent, StreamText
from cerveau_tui.app.replay import redraw_items
from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.tool_card import ToolCard
from cerveau_tui.bus import Emitter
from cerveau_tui.config import Settings
from cerveau_tui.protocol import Event

from .helpers import FakeClock, FakeSession, wait_until


def _stored() -> list[Event]:
    bus = Emitter()
    return [
        bus.emit("turn_started", {"input": "the code word is PAMPLEMOUSSE"}),
        bus.emit("tool_call", {"call_id": "c1", "name": "bash", "arguments": {"command": "ls"}}),
        bus.emit(
            "approval_requested",
            {"request_id": "r1", "call_id": "c1", "tool": "bash", "summary": "ls", "reason": "x"},
        ),
        bus.emit("tool_result", {"call_id": "c1", "name": "bash", "ok": True, "output": "a.txt"}),
        bus.emit("assistant_message", {"content": "Noted: PAMPLEMOUSSE.", "reasoning": ""}),
        bus.emit("turn_ended", {"reason": "completed", "iterations": 2}),
    ]


def test_old_questions_are_not_asked_again_and_replies_are_drawn_as_text() -> None:
    items = redraw_items(_stored())
    types = [i.type for i in items if isinstance(i, EngineEvent)]
    assert "approval_requested" not in types
    assert StreamText("answer", "Noted: PAMPLEMOUSSE.") in items
    # the reply's text comes before the event that settles it, as it would have streamed
    text_at = items.index(StreamText("answer", "Noted: PAMPLEMOUSSE."))
    settle_at = next(
        i
        for i, x in enumerate(items)
        if isinstance(x, EngineEvent) and x.type == "assistant_message"
    )
    assert text_at < settle_at


class _Resumed(FakeSession):
    def transcript(self) -> list[Event]:
        return _stored()


async def test_the_app_redraws_a_resumed_conversation(tmp_path: Path) -> None:
    app = CerveauApp(
        Settings(workspace=tmp_path),
        session_factory=lambda bus, approver, progress: _Resumed(),  # type: ignore[arg-type,return-value]
        clock=FakeClock(),
        save_setting=lambda k, v: None,
    )
    async with app.run_test() as pilot:
        chat = app.query_one(ChatView)
        assert await wait_until(pilot, lambda: "PAMPLEMOUSSE." in _text(chat))
        assert "the code word is PAMPLEMOUSSE" in _text(chat)
        assert len(chat.query(ToolCard)) == 1
        assert app.screen is app.screen_stack[0]  # no dialog from the stored question


def _text(chat: ChatView) -> str:
    return " ".join(str(w.render()) for w in chat.walk_children() if hasattr(w, "render"))
