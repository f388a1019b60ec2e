"""The journal's history records: each message History.append hears, in order, before the event
that follows it; logs written by the old format (a bare `m`, `reset` records) still read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.history import CallRef, History, Message, Origin
from cerveau_tui.loop.state import EngineState
from cerveau_tui.plan.persist import SessionLog
from cerveau_tui.session.journal import Journal
from cerveau_tui.session.stored import read_session


def _journal(ws: Path) -> tuple[Emitter, SessionLog, EngineState]:
    bus, state = Emitter("j"), EngineState()
    log = SessionLog(ws, "j")
    Journal(log, state, ws)
    bus.subscribe(log)
    return bus, log, state


def test_messages_reach_the_log_before_the_event_that_follows_them(tmp_path: Path) -> None:
    bus, log, state = _journal(tmp_path)
    state.history.append(Message.user("one"))
    bus.emit("iteration_started", {"iteration": 1})
    lines = log.path.read_text().splitlines()
    assert '"content":"one"' in lines[-2] and "iteration_started" in lines[-1]
    log.close()


def test_a_history_replaced_wholesale_is_written_again_from_empty(tmp_path: Path) -> None:
    """The old format: a compaction that replaced the history wrote `reset`, then it whole."""
    log = SessionLog(tmp_path, "j")
    a, b = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}
    brief = {"role": "user", "content": "brief"}
    log.append([{"kind": "message", "m": a}, {"kind": "message", "m": b}])
    log.append([{"kind": "reset"}, {"kind": "message", "m": brief}, {"kind": "message", "m": b}])
    log.close()
    assert read_session(tmp_path, "j").history == [brief, b]


def test_a_message_of_the_old_format_reads_back_as_stored_with_its_dict_as_written(
    tmp_path: Path,
) -> None:
    old = {"role": "tool", "content": "the person denied this call", "tool_call_id": "c1"}
    log = SessionLog(tmp_path, "j")
    log.append([{"kind": "message", "m": old}])
    log.close()
    (m,) = read_session(tmp_path, "j").history.messages
    assert (m.origin, m.status, m.call_id) == (Origin.STORED, "", "c1")
    assert list(m.wire) == ["role", "content", "tool_call_id"]  # key order kept: the cached bytes


def test_origin_and_status_are_stored_and_read_back(tmp_path: Path) -> None:
    bus, log, state = _journal(tmp_path)
    state.history.append(Message.reply("", [CallRef("c1", "bash", '{"command": "rm x"}')]))
    state.history.append(Message.result("c1", "refused", "denied"))
    state.history.append(Message.user("[reminder] x", Origin.REMINDER))
    bus.emit("notice", {"text": "x"})
    log.close()
    stored = read_session(tmp_path, "j").history
    assert stored == state.history
    kinds = [(m.origin, m.status) for m in stored.messages]
    assert kinds == [(Origin.MODEL, ""), (Origin.TOOL, "denied"), (Origin.REMINDER, "")]


def test_a_restored_history_is_not_written_again(tmp_path: Path) -> None:
    """Restoring is not appending: the messages came from this log; no diff to get wrong."""
    bus, log, state = _journal(tmp_path)
    state.history.restore([{"role": "user", "content": "from the log"}])
    state.history.append(Message.user("new"))
    bus.emit("notice", {"text": "x"})
    log.close()
    said = [r["m"]["content"] for r in map(json.loads, log.path.read_text().splitlines())
            if r.get("kind") == "message"]  # fmt: skip
    assert said == ["new"]


def test_history_takes_only_typed_messages() -> None:
    with pytest.raises(TypeError):
        History().append({"role": "user", "content": "x"})  # type: ignore[arg-type]


def test_streamed_tokens_are_not_logged_but_flush_the_history(tmp_path: Path) -> None:
    bus, log, state = _journal(tmp_path)
    state.history.append(Message.user("q"))
    bus.emit("token", {"text": "t"})
    log.close()
    text = log.path.read_text()
    assert '"token"' not in text and read_session(tmp_path, "j").history == state.history


def test_a_lone_surrogate_from_the_model_is_stored_and_read_back_exactly(tmp_path: Path) -> None:
    # JSON may spell half a surrogate pair ("\ud83d"), and Python decodes it: encoded raw, the
    # line would fail and the message and its event be lost from the log.
    bus, log, state = _journal(tmp_path)
    state.history.append(Message.reply("half a pair: \ud83d!"))
    bus.emit("assistant_message", {"content": "half a pair: \ud83d!"})
    log.close()
    stored = read_session(tmp_path, "j")
    assert stored.torn == 0 and stored.history == state.history
    assert bus.errors == []
