"""The journal's history records: appended in order, a replaced history written again whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter
from cerveau_tui.plan.persist import SessionLog
from cerveau_tui.session.journal import Journal
from cerveau_tui.session.stored import read_session


@dataclass
class State:
    history: list[dict[str, Any]] = field(default_factory=list)
    turn_changes: dict[str, list[str]] = field(default_factory=dict)


def _journal(ws: Path) -> tuple[Emitter, SessionLog, State]:
    bus, state = Emitter("j"), State()
    log = SessionLog(ws, "j")
    Journal(log, state, ws)
    bus.subscribe(log)
    return bus, log, state


def test_messages_reach_the_log_before_the_event_that_follows_them(tmp_path: Path) -> None:
    bus, log, state = _journal(tmp_path)
    state.history.append({"role": "user", "content": "one"})
    bus.emit("iteration_started", {"iteration": 1})
    lines = log.path.read_text().splitlines()
    assert '"content":"one"' in lines[-2] and "iteration_started" in lines[-1]
    log.close()


def test_a_history_replaced_wholesale_is_written_again_from_empty(tmp_path: Path) -> None:
    bus, log, state = _journal(tmp_path)
    state.history += [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    bus.emit("notice", {"text": "x"})
    state.history[:] = [{"role": "user", "content": "brief"}, {"role": "assistant", "content": "b"}]
    bus.emit("notice", {"text": "y"})
    log.close()
    assert read_session(tmp_path, "j").history == state.history


def test_streamed_tokens_are_not_logged_but_flush_the_history(tmp_path: Path) -> None:
    bus, log, state = _journal(tmp_path)
    state.history.append({"role": "user", "content": "q"})
    bus.emit("token", {"text": "t"})
    log.close()
    text = log.path.read_text()
    assert '"token"' not in text and read_session(tmp_path, "j").history == state.history


def test_a_lone_surrogate_from_the_model_is_stored_and_read_back_exactly(tmp_path: Path) -> None:
    # JSON may spell half a surrogate pair ("\ud83d"), and Python decodes it: encoded raw, the
    # line would fail and the message and its event be lost from the log.
    bus, log, state = _journal(tmp_path)
    state.history.append({"role": "assistant", "content": "half a pair: \ud83d!"})
    bus.emit("assistant_message", {"content": "half a pair: \ud83d!"})
    log.close()
    stored = read_session(tmp_path, "j")
    assert stored.torn == 0 and stored.history == state.history
    assert bus.errors == []
