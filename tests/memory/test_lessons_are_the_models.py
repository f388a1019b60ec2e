"""Lessons are the model's (issue 24): what the person ran (`!cmd`) and what they decided (a
denial) are never mined; a denied `!echo hi > …` and a failed `!curl` became lessons recalled to
the model next session, which then ran `echo hi` three times."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from cerveau_tui.config import load_settings
from cerveau_tui.history import History, Message, Origin
from cerveau_tui.hooks import TurnContext
from cerveau_tui.loop.approver import DenyAll
from cerveau_tui.memory.lessons import consolidate_lessons, observe
from cerveau_tui.memory.store import MemoryStore
from cerveau_tui.memory.turn_close import TurnCloseHook
from cerveau_tui.protocol import Event
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def session_lessons(tmp_path: Path, person: list[str], model: list[str]) -> list[Any]:
    """A first turn (so the session listens), the person's commands, then a turn in which the
    model runs `model`. Headless: nobody approves, so what needs approval is denied."""
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(ws, environ={}, user_config=tmp_path / "none.toml")
    script = [{"content": "hello"}, *(bash(c) for c in model), {"content": "done"}]
    with ScriptedServer({"responses": script}) as srv:
        s = build_session(settings, approver=DenyAll(), provider=LlamaProvider(srv.url))
        s.engine.run("hi")
        s.engine.settle()
        for command in person:
            s.engine.exec(command)
        s.engine.run("go on")
        s.engine.settle()
        lessons = s.lessons()
        s.close()
    return lessons


def test_a_denied_echo_and_a_failed_curl_of_the_person_mine_no_lesson(tmp_path: Path) -> None:
    outside = tmp_path / "x"  # outside the workspace: the write needs an approval, denied
    person = [f"echo hi > {outside}", "curl http://example.invalid/"]
    assert session_lessons(tmp_path, person, ["python3 -c 'print(2)'"]) == []
    assert not outside.exists()


def test_the_models_failure_then_fix_still_mines_one(tmp_path: Path) -> None:
    model = ["leftpadx --help", "leftpadx -v", "leftpadx x", "python3 -c 'print(2)'"]
    (lesson,) = session_lessons(tmp_path, [f"echo hi > {tmp_path / 'x'}"], model)
    assert lesson.kind == "breaker" and lesson.fix == "python3 -c 'print(2)'"


_seq = itertools.count(1)


def ev(type_: str, **payload: Any) -> Event:
    return Event(type=type_, session_id="s", seq=next(_seq), payload=payload)


def test_a_command_the_person_ran_after_the_models_trip_is_not_its_fix() -> None:
    events = [
        ev("guard_tripped", guard="breaker", reason="missing dependency: leftpadx"),
        ev(
            "tool_call",
            call_id="user-1",
            name="bash",
            via="person",
            arguments={"command": "pip install leftpadx"},
        ),
        ev("tool_result", call_id="user-1", name="bash", ok=True, exit_code=0, status="done"),
    ]
    seen = [s for s in map(observe, events) if s is not None]
    assert consolidate_lessons(seen) == []


class _Recording:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def complete_json(self, messages: list[dict[str, Any]], schema: Any, **_: Any) -> str:
        self.messages = messages
        return '{"facts": [], "lessons": []}'


def test_the_turn_close_distill_does_not_read_the_persons_commands(tmp_path: Path) -> None:
    history = History()
    history.append(Message.user("fix the parser"))
    history.append(
        Message.user("I ran `curl http://example.invalid/` myself:\nrefused", Origin.SHELL)
    )
    history.append(Message.reply("done"))
    provider = _Recording()
    store = MemoryStore(tmp_path)
    hook = TurnCloseHook(provider=provider, store=store)
    ctx = TurnContext("t1", 1, tmp_path, None, state=None, history=history, settings=None)  # type: ignore[arg-type]
    ctx.calls.append(type("C", (), {"wrote": ["a.py"]})())  # type: ignore[arg-type]
    hook.after_turn(ctx, "completed")
    store.close()
    sent = " ".join(str(m.get("content")) for m in provider.messages)
    assert "fix the parser" in sent and "curl" not in sent
