"""The router: events typed once and routed by payload class; a card found by its DOM id."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from cerveau_tui.app.widgets.chat import ChatView, card_id
from cerveau_tui.app.widgets.entries import NoticeLine
from cerveau_tui.app.widgets.tool_card import ToolCard
from cerveau_tui.app.wire import Untyped, typed
from cerveau_tui.bus import Emitter
from cerveau_tui.protocol import Event, ToolCallPayload

from .helpers import viewer_app, wait_until


def test_call_ids_that_differ_never_share_a_card_id() -> None:
    ids = ["call_1", "call-1", "call.1", "call 1", "c/1", "c_2f_1"]
    assert len({card_id(i) for i in ids}) == len(ids)
    assert all(card_id(i).replace("-", "").replace("_", "").isalnum() for i in ids)


def test_a_payload_is_typed_by_its_event_type_and_unknown_types_stay_dicts() -> None:
    bus = Emitter()
    call = bus.emit("tool_call", {"call_id": "c1", "name": "bash", "arguments": {}})
    assert isinstance(typed(call), ToolCallPayload)
    # The protocol is closed: the bus refuses a type outside it, so only a log from another
    # version can carry one (an Event read back, not emitted).
    other = typed(Event(type="notice_v0", session_id="s", seq=1, payload={"text": "hi"}))
    assert other == Untyped("notice_v0", {"text": "hi"})


def test_a_payload_that_does_not_fit_its_model_is_said_not_dropped() -> None:
    # The bus refuses a misfit at the speaker; a log read back can still hold one.
    bad = typed(Event(type="tool_call", session_id="s", seq=1, payload={"name": "bash"}))
    assert isinstance(bad, Untyped) and "call_id" in bad.problem


def test_the_bus_refuses_a_payload_that_does_not_fit_its_model() -> None:
    with pytest.raises(ValidationError):
        Emitter().emit("tool_call", {"name": "bash"})


async def test_a_reused_call_id_routes_to_the_newest_card(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test() as pilot:
        for command in ("ls", "pwd"):
            app.bus.emit(
                "tool_call", {"call_id": "c1", "name": "bash", "arguments": {"command": command}}
            )
            app.bus.emit(
                "tool_result",
                {"call_id": "c1", "name": "bash", "ok": command == "ls", "output": command},
            )
        chat = app.query_one(ChatView)
        assert await wait_until(pilot, lambda: len(chat.query(ToolCard)) == 2)
        cards = list(chat.query(ToolCard))
        assert await wait_until(pilot, lambda: [c.status for c in cards] == ["done", "failed"])


async def test_an_event_that_does_not_fit_its_model_shows_a_warning(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test() as pilot:
        # As a replayed log would deliver it: the bus itself refuses a misfit.
        misfit = Event(type="tool_result", session_id="s", seq=1, payload={"call_id": "c9"})
        for deliver in list(app.bus._subscribers):
            deliver(misfit)
        chat = app.query_one(ChatView)
        assert await wait_until(
            pilot,
            lambda: any("ToolResultPayload" in str(n.render()) for n in chat.query(NoticeLine)),
        )
