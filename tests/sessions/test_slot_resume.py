"""Instant resume against the scripted server's slot endpoints (testing/slots.py): the session's
slot saved at turn end, restored before the resumed session's first request, the first request's
`cache_n` as the proof, and every fallback said once or not at all."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.protocol import EventType
from cerveau_tui.session.slot_keeper import SlotKeeper
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.testing.slots import ScriptedSlots

from .conftest import open_session

LONG = "please read this carefully. " * 120
THREE = {"responses": [{"content": "one"}, {"content": "two"}, {"content": "three"}]}


@pytest.fixture
def srv(cache: Path) -> Iterator[ScriptedServer]:
    with ScriptedServer(THREE) as s:
        s.state.slots = ScriptedSlots(cache / "slots")
        yield s


def _turn(ws: Path, url: str, task: str, resume: str | None = None) -> tuple[str, Any]:
    session, rec = open_session(ws, url, resume=resume)
    try:
        session.engine.run(task)
        sid = session.bus.session_id
    finally:
        session.close()
    return sid, rec


def _first_usage(rec: Any) -> dict[str, Any]:
    return dict(rec.of(EventType.USAGE)[0].payload)


def _notices(rec: Any) -> list[str]:
    return [
        e.payload["text"] for e in rec.of(EventType.NOTICE) if e.payload.get("source") == "slots"
    ]


def test_the_slot_is_saved_at_turn_end_under_the_session_and_prefix(
    tmp_path: Path, cache: Path, srv: ScriptedServer
) -> None:
    sid, _ = _turn(tmp_path, srv.url, LONG)
    saves = [name for action, name in srv.state.slots.actions if action == "save"]
    assert len(saves) == 1 and saves[0].startswith(f"{sid}-") and saves[0].endswith(".bin")
    assert (cache / "slots" / saves[0]).is_file()
    record = json.loads((cache / "slot-records" / f"{sid}.json").read_text())
    assert record["filename"] == saves[0] and record["local"] is True
    # All but the last message: what every later request opens with (a continuing side request,
    # turn close's distill, adds one of its own).
    assert record["prefix_messages"] == len(srv.requests[-1]["messages"]) - 1


def test_a_resume_restores_the_slot_before_its_first_request_and_cache_n_proves_it(
    tmp_path: Path, srv: ScriptedServer
) -> None:
    sid, _ = _turn(tmp_path, srv.url, LONG)
    srv.state.forget_cache()  # the app's own server died with the app
    _, rec = _turn(tmp_path, srv.url, "and now?", resume=sid)
    actions = [a for a, _ in srv.state.slots.actions]
    assert actions == ["save", "restore", "save"]
    assert _first_usage(rec)["cache_n"] > 0
    assert any("restored from the saved slot" in t for t in _notices(rec))


def test_without_a_saved_slot_the_resumed_first_request_reads_everything(
    tmp_path: Path, cache: Path, srv: ScriptedServer
) -> None:
    sid, _ = _turn(tmp_path, srv.url, LONG)
    (cache / "slot-records" / f"{sid}.json").unlink()
    srv.state.forget_cache()
    _, rec = _turn(tmp_path, srv.url, "and now?", resume=sid)
    assert _first_usage(rec)["cache_n"] == 0
    assert "restore" not in [a for a, _ in srv.state.slots.actions]


def test_a_restore_that_restores_nothing_is_said_once_and_the_session_goes_on(
    tmp_path: Path, srv: ScriptedServer
) -> None:
    sid, _ = _turn(tmp_path, srv.url, LONG)
    srv.state.forget_cache()
    srv.state.slots.hollow = True
    _, rec = _turn(tmp_path, srv.url, "and now?", resume=sid)
    said = _notices(rec)
    assert len([t for t in said if "reused none" in t]) == 1
    assert rec.of(EventType.TURN_ENDED)[-1].payload["reason"] == "completed"


def test_a_saved_slot_that_is_gone_falls_back_with_one_notice(
    tmp_path: Path, cache: Path, srv: ScriptedServer
) -> None:
    sid, _ = _turn(tmp_path, srv.url, LONG)
    for f in (cache / "slots").iterdir():
        f.unlink()
    srv.state.forget_cache()
    _, rec = _turn(tmp_path, srv.url, "and now?", resume=sid)
    assert [t for t in _notices(rec) if "could not be restored" in t]
    assert _first_usage(rec)["cache_n"] == 0
    assert rec.of(EventType.TURN_ENDED)[-1].payload["reason"] == "completed"


def test_a_slot_saved_for_another_model_is_not_restored(
    tmp_path: Path, srv: ScriptedServer
) -> None:
    sid, _ = _turn(tmp_path, srv.url, LONG)
    srv.state.forget_cache()
    srv.state.props = {"model_path": "/models/another.gguf"}
    _, rec = _turn(tmp_path, srv.url, "and now?", resume=sid)
    assert [t for t in _notices(rec) if "another model" in t]
    assert [a for a, _ in srv.state.slots.actions].count("restore") == 0


def test_a_server_without_slot_endpoints_is_left_alone_silently(tmp_path: Path) -> None:
    with ScriptedServer(THREE) as plain:
        session, rec = open_session(tmp_path, plain.url)
        try:
            assert not isinstance(session.engine.provider, SlotKeeper)
            session.engine.run(LONG)
        finally:
            session.close()
        assert not [p for p in plain.state.hits if p.startswith("/slots/")]
    assert not _notices(rec)


def test_a_server_without_a_save_folder_is_left_alone_silently(tmp_path: Path, cache: Path) -> None:
    with ScriptedServer(THREE) as s:
        s.state.slots = ScriptedSlots(None)  # answers /slots, refuses every action with 501
        session, rec = open_session(tmp_path, s.url)
        try:
            session.engine.run(LONG)
            session.engine.run("again")
        finally:
            session.close()
        tried = sum(n for p, n in s.state.hits.items() if p.startswith("/slots/"))
    assert tried == 1  # refused once, never asked again
    assert not _notices(rec) and not (cache / "slot-records").exists()


def test_saved_slots_go_with_their_sessions(
    tmp_path: Path, cache: Path, srv: ScriptedServer
) -> None:
    from cerveau_tui.session.slots import SlotStore

    sid, _ = _turn(tmp_path, srv.url, LONG)
    (saved,) = list((cache / "slots").iterdir())
    (tmp_path / ".cerveau" / "sessions" / f"{sid}.jsonl").unlink()  # the session is deleted
    removed = SlotStore(cache / "slot-records", cache / "slots").collect()
    assert removed == [saved.name]
    assert not saved.exists() and not (cache / "slot-records" / f"{sid}.json").exists()


def test_a_slot_file_no_record_names_is_collected_once_old(cache: Path) -> None:
    from cerveau_tui.session.slots import ORPHAN_AGE_S, SlotStore

    orphan = cache / "slots" / "gone-abc-def.bin"
    orphan.write_bytes(b"kv")
    store = SlotStore(cache / "slot-records", cache / "slots")
    assert store.collect(now=orphan.stat().st_mtime + 1) == []  # maybe a save being written
    assert store.collect(now=orphan.stat().st_mtime + ORPHAN_AGE_S + 1) == [orphan.name]


def test_after_a_side_request_the_next_chat_request_gets_the_saved_slot_back(
    tmp_path: Path, cache: Path, srv: ScriptedServer
) -> None:
    """The turn close's distill (complete_json) takes the one slot after the save; without a
    restore the next turn's first request read the whole conversation again."""
    session, rec = open_session(tmp_path, srv.url)
    try:
        session.engine.run(LONG)
        keeper = session.engine.provider
        assert isinstance(keeper, SlotKeeper)
        keeper._wait()  # the turn end's save
        keeper.complete_json(
            [{"role": "user", "content": "distill " * 50}], {"type": "object"}, max_tokens=8
        )
        session.engine.run("and now?")
    finally:
        session.close()
    actions = [a for a, _ in srv.state.slots.actions]
    assert actions[:3] == ["save", "restore", "save"]
    assert rec.of(EventType.USAGE)[-1].payload["cache_n"] > 0
