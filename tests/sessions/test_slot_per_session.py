"""A multi-slot server gives each session its own slot (session/slot_claim.py): every request
names it (`id_slot`), its save and restore act on it, and two sessions taking turns on one
server each keep their cached conversation. On the scripted server with two slots, each with its
own cache (testing/slots.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.protocol import EventType
from cerveau_tui.session.slot_claim import claim_slot
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.testing.slots import ScriptedSlots

from .conftest import open_session

LONG = "please read this carefully. " * 120
REPLIES = {"responses": [{"content": f"reply {i}"} for i in range(8)]}


@pytest.fixture
def srv(cache: Path) -> Iterator[ScriptedServer]:
    with ScriptedServer(REPLIES, n_ctx=16384) as s:
        s.state.slots = ScriptedSlots(cache / "slots", slots=2)
        yield s


def _usages(rec: Any) -> list[dict[str, Any]]:
    return [dict(e.payload) for e in rec.of(EventType.USAGE)]


def test_two_sessions_taking_turns_each_keep_their_own_slot(
    tmp_path: Path, srv: ScriptedServer
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, rec_a = open_session(tmp_path / "a", srv.url)
    b, rec_b = open_session(tmp_path / "b", srv.url)
    try:
        a.engine.run(LONG + "(a)")
        b.engine.run(LONG + "(b)")
        a.engine.run("and one more thing")
    finally:
        a.close()
        b.close()
    slots = [r.get("id_slot") for r in srv.requests]
    assert slots[0] != slots[1] and {slots[0], slots[1]} == {0, 1} and slots[2] == slots[0]
    # A's second turn read only what it appended: B's turn went to the other slot.
    second = _usages(rec_a)[1]
    assert second["cache_n"] > 300 and second["prompt_n"] < 60
    # Each session's save acted on its own slot.
    acted = dict(zip(srv.state.slots.acted_on, srv.state.slots.actions, strict=True))
    assert set(acted) == {0, 1}


def test_a_session_on_a_single_slot_server_names_no_slot(tmp_path: Path, cache: Path) -> None:
    with ScriptedServer(REPLIES) as s:
        s.state.slots = ScriptedSlots(cache / "slots")
        session, _ = open_session(tmp_path, s.url)
        try:
            session.engine.run("hello")
        finally:
            session.close()
        assert "id_slot" not in s.requests[0]


def test_a_claim_is_held_until_released_and_every_slot_claimed_is_none(tmp_path: Path) -> None:
    first = claim_slot(tmp_path, "http://127.0.0.1:1", [0, 1])
    second = claim_slot(tmp_path, "http://127.0.0.1:1", [0, 1])
    assert first is not None and second is not None and (first.slot, second.slot) == (0, 1)
    assert claim_slot(tmp_path, "http://127.0.0.1:1", [0, 1]) is None
    assert claim_slot(tmp_path, "http://127.0.0.1:2", [0, 1]) is not None  # another server
    first.release()
    again = claim_slot(tmp_path, "http://127.0.0.1:1", [0, 1])
    assert again is not None and again.slot == 0
