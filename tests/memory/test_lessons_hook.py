"""LessonsHook in a turn's life: it listens from the first turn's start, mines after the turn,
recalls once per session, never creates the database just to read, and the session lists and
forgets what it stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.history import History
from cerveau_tui.hooks import TurnContext
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.memory.lessons import LessonDraft
from cerveau_tui.memory.lessons_hook import LessonsHook
from cerveau_tui.memory.store import LessonStore
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def ctx(ws: Path, bus: Emitter) -> TurnContext:
    return TurnContext("t1", 0, ws, bus, state=None, history=History(), settings=None)  # type: ignore[arg-type]


def breaker_events(bus: Emitter) -> None:
    bus.emit("guard_tripped", {"guard": "breaker", "reason": "No network", "iteration": 1})
    bus.emit("tool_call", {"call_id": "c", "name": "bash", "arguments": {"command": "make"}})
    bus.emit("tool_result", {"call_id": "c", "name": "bash", "ok": True, "exit_code": 0})


def test_events_after_the_turn_starts_are_mined_and_said(tmp_path: Path) -> None:
    bus, hook = Emitter(), LessonsHook(tmp_path, stack=lambda _ws: "generic")
    rec = Recorder(bus)
    c = ctx(tmp_path, bus)
    hook.on_turn_start(c, "build it")
    breaker_events(bus)
    hook.after_turn(c, "completed")
    (said,) = rec.of("lessons")
    assert (
        said.payload["stored"][0]["text"]
        == "`No network` kept failing; what worked after it: `make`"
    )
    assert [x.stack for x in hook.lessons()] == ["generic"]
    hook.close()


def test_events_before_the_hook_listens_are_not_mined(tmp_path: Path) -> None:
    bus, hook = Emitter(), LessonsHook(tmp_path)
    breaker_events(bus)  # no turn has started: nothing subscribed
    c = ctx(tmp_path, bus)
    hook.on_turn_start(c, "x")
    hook.after_turn(c, "completed")
    assert hook.lessons() == []
    hook.close()


def test_a_second_turn_does_not_store_the_sessions_lessons_again(tmp_path: Path) -> None:
    bus, hook = Emitter(), LessonsHook(tmp_path)
    rec = Recorder(bus)
    c = ctx(tmp_path, bus)
    hook.on_turn_start(c, "x")
    breaker_events(bus)
    hook.after_turn(c, "completed")
    hook.on_turn_start(c, "y")
    hook.after_turn(c, "completed")
    assert len(rec.of("lessons")) == 1 and [x.seen for x in hook.lessons()] == [1]
    hook.close()


def test_recall_happens_once_per_session(tmp_path: Path) -> None:
    store = LessonStore(tmp_path)
    store.add(LessonDraft(kind="breaker", trigger="No network", fix="make", stack="generic"))
    store.close()
    bus, hook = Emitter(), LessonsHook(tmp_path, stack=lambda _ws: "generic")
    c = ctx(tmp_path, bus)
    hook.on_turn_start(c, "make the docs")
    first, second = hook.reminders(c), hook.reminders(c)
    assert len(first) == 1 and "`make`" in first[0] and second == []
    hook.close()


def test_a_workspace_without_lessons_is_not_given_a_database(tmp_path: Path) -> None:
    bus, hook = Emitter(), LessonsHook(tmp_path)
    c = ctx(tmp_path, bus)
    hook.on_turn_start(c, "x")
    assert hook.reminders(c) == [] and hook.lessons() == [] and hook.forget(1) is False
    assert not (tmp_path / ".cerveau").exists()
    hook.close()


def test_a_planted_database_link_is_moved_aside_and_said(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"")
    ws = tmp_path / "ws"
    (ws / ".cerveau").mkdir(parents=True)
    (ws / ".cerveau" / "memory.sqlite").symlink_to(victim)
    bus, hook = Emitter(), LessonsHook(ws)
    rec = Recorder(bus)
    c = ctx(ws, bus)
    hook.on_turn_start(c, "x")
    breaker_events(bus)
    hook.after_turn(c, "completed")
    assert victim.read_bytes() == b""
    assert any(n.payload.get("source") == "boundary" for n in rec.of("notice"))
    hook.close()


def script() -> list[dict[str, Any]]:
    bash = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": c}}]}
        for c in ("leftpadx --help", "leftpadx -v", "leftpadx x", "python3 -c 'print(2)'")
    ]
    return [*bash, {"content": "done"}]


def test_the_session_lists_and_forgets_lessons(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "none.toml")
    with ScriptedServer({"responses": script()}) as srv:
        s = build_session(settings, approver=ApproveAll(), provider=LlamaProvider(srv.url))
        s.engine.run("pad with leftpadx")
        s.engine.settle()
        (lesson,) = s.lessons()
        assert lesson.trigger == "missing dependency: leftpadx"
        assert s.forget_lesson(lesson.id) is True and s.lessons() == []
        assert s.forget_lesson(lesson.id) is False
        s.close()
