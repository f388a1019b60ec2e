"""Turn close and explore switched mid-session (the palette's Session.set_turn_close and
set_explore, issue 36): each takes effect at the next turn, and neither changes the tools sent
when it is switched off (they are the prompt's prefix)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.memory.turn_close import DISTILL_PROMPT
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.py", "content": "1\n"}}]}
DISTILL = {"content": '{"facts": ["The entry point is a.py and it prints 1"], "lessons": []}'}
EXPLORE = {"tool_calls": [{"name": "explore", "arguments": {"task": "what is in a.py?"}}]}


def _session(ws: Path, url: str, **flags: Any) -> tuple[Any, Recorder]:
    settings = load_settings(ws, flags=flags, environ={}, user_config=ws.parent / "none.toml")
    bus = Emitter()
    rec = Recorder(bus)
    return build_session(settings, bus=bus, provider=LlamaProvider(url)), rec


def _distills(requests: list[dict[str, Any]]) -> int:
    return sum(1 for r in requests if DISTILL_PROMPT in str(r["messages"][-1].get("content")))


def test_turn_close_switched_on_then_off_distills_after_the_turns_in_between(tmp_path):
    script = [
        WRITE,
        {"content": "one"},
        WRITE,
        {"content": "two"},
        DISTILL,
        WRITE,
        {"content": "3"},
    ]
    with ScriptedServer({"responses": script}) as srv:
        s, rec = _session(tmp_path, srv.url, turn_close=False)
        try:
            s.engine.run("first")
            s.engine.settle()
            off = _distills(srv.requests)
            s.set_turn_close(True)
            s.engine.run("second")
            s.engine.settle()
            on = _distills(srv.requests)
            s.set_turn_close(False)
            s.engine.run("third")
            s.engine.settle()
            again = _distills(srv.requests)
        finally:
            s.close()
    assert (off, on, again) == (0, 1, 1)
    said = [e.payload["text"] for e in rec.of("notice")]
    assert any(t.startswith("turn close on") for t in said)
    assert any("remembered" in t for t in said)


def _explore_switched(ws: Path, script: list[Any], *, was: bool) -> tuple[Any, Recorder]:
    """A turn, explore switched the other way, a second turn: (the requests, the events)."""
    with ScriptedServer({"responses": script}) as srv:
        s, rec = _session(ws, srv.url, delegate=was)
        try:
            s.engine.run("first")
            s.set_explore(not was)
            s.engine.run("second")
        finally:
            s.close()
        return list(srv.requests), rec


def test_explore_switched_off_keeps_the_tools_sent_and_says_it_is_off(tmp_path):
    script = [{"content": "one"}, EXPLORE, {"content": "two"}]
    (first, explore, after), rec = _explore_switched(tmp_path, script, was=True)
    assert first["tools"] == explore["tools"] == after["tools"]  # the prefix did not move
    result = [e.payload for e in rec.of("tool_result") if e.payload["name"] == "explore"][0]
    assert not result["ok"] and "switched off" in result["output"]


def test_explore_switched_on_joins_the_tools_and_runs_a_child(tmp_path):
    (tmp_path / "a.py").write_text("print(1)\n")
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]}
    script = [{"content": "one"}, EXPLORE, read, {"content": "it prints 1"}, {"content": "two"}]
    requests, rec = _explore_switched(tmp_path, script, was=False)
    names = [{t["function"]["name"] for t in r["tools"]} for r in requests]
    assert "explore" not in names[0] and "explore" in names[1]
    finished = [e.payload for e in rec.of("delegated") if e.payload["state"] == "finished"]
    assert finished and finished[0]["read"] == ["a.py"]
    said = [e.payload["text"] for e in rec.of("notice")]
    assert any("explore on" in t and "reads the conversation once more" in t for t in said)


def test_memory_turn_close_in_the_config_and_the_environment_is_the_switch(tmp_path):
    user = tmp_path / "user.toml"
    user.write_text("[memory]\nturn_close = true\n")
    from_config = load_settings(tmp_path, environ={}, user_config=user)
    from_env = load_settings(
        tmp_path, environ={"CERVEAU_MEMORY__TURN_CLOSE": "false"}, user_config=user
    )
    assert from_config.turn_close is True and from_env.turn_close is False
    from_config.turn_close = False  # the palette's switch is not undone by the alias
    assert from_config.turn_close is False


def test_a_workspace_cannot_switch_turn_close_on_through_memory(tmp_path):
    ws, user = tmp_path / "ws", tmp_path / "user.toml"
    (ws / ".cerveau").mkdir(parents=True)
    (ws / ".cerveau" / "config.toml").write_text("[memory]\nturn_close = true\n")
    user.write_text("turn_close = false\n")
    s = load_settings(ws, environ={}, user_config=user)
    assert s.turn_close is False and "turn_close" in s.workspace_review[0]


def test_doctor_says_which_are_on(tmp_path, capsys, monkeypatch):
    from cerveau_tui.cli import main
    from cerveau_tui.testing.scripted_server import ScriptedServer

    monkeypatch.setenv("CERVEAU_MEMORY__TURN_CLOSE", "true")
    monkeypatch.setenv("CERVEAU_DELEGATE", "false")
    with ScriptedServer({"responses": []}) as srv:
        assert main(["doctor", "--workspace", str(tmp_path), "--server", srv.url]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("memory:")]
    assert lines == [
        "memory:    turn close on ([memory] turn_close), explore off (delegate); "
        "the palette switches each for a session"
    ]
