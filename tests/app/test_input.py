"""The prompt against the real engine: steering mid-turn, `!` commands, interrupts, history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cerveau_tui.app.widgets.prompt import PromptInput
from cerveau_tui.app.widgets.tool_card import ToolCard
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, engine_app, viewer_app, wait_until


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def running(rec: Any) -> bool:
    return any(e.payload.get("status") == "running" for e in rec.of("tool_started"))


async def _ready(pilot: Any, app: Any) -> None:
    assert await wait_until(pilot, lambda: app.runner.session is not None)


async def test_typing_while_a_turn_runs_steers_the_next_round(tmp_path: Path) -> None:
    with ScriptedServer({"responses": [bash("sleep 3"), {"content": "ok"}]}) as srv:
        app, rec = engine_app(tmp_path, srv.url)
        async with app.run_test() as pilot:
            await _ready(pilot, app)
            await pilot.press(*"wait a bit", "enter")
            assert await wait_until(pilot, lambda: running(rec))
            await pilot.press(*"also write tests", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")), steps=400)
            await pilot.press("ctrl+q")
        second = json.dumps(srv.requests[1]["messages"])
    assert "also write tests" in second
    assert [e.payload["text"] for e in rec.of("steer")] == ["also write tests"]


async def test_a_bang_line_runs_the_command_and_the_model_sees_it(tmp_path: Path) -> None:
    with ScriptedServer({"responses": [{"content": "seen"}]}) as srv:
        app, rec = engine_app(tmp_path, srv.url)
        async with app.run_test() as pilot:
            await _ready(pilot, app)
            await pilot.press(*"!echo hi > b.txt", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("tool_result")) and not app.busy)
            card_title = app.query_one(ToolCard).title
            await pilot.press(*"what did I do", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            await pilot.press("ctrl+q")
        first = json.dumps(srv.requests[0]["messages"])
    assert (app.settings.workspace / "b.txt").read_text() == "hi\n"
    assert [e.payload["command"] for e in rec.of("user_exec")] == ["echo hi > b.txt"]
    assert "echo hi > b.txt" in first
    assert "you ran bash  echo hi > b.txt" in str(card_title)


async def test_ctrl_c_interrupts_a_running_command(tmp_path: Path) -> None:
    with ScriptedServer({"responses": [bash("sleep 60"), {"content": "never"}]}) as srv:
        app, rec = engine_app(tmp_path, srv.url)
        async with app.run_test() as pilot:
            await _ready(pilot, app)
            await pilot.press(*"wait", "enter")
            assert await wait_until(pilot, lambda: running(rec))
            await pilot.press("ctrl+c")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            await pilot.press("ctrl+q")
    assert rec.of("turn_ended")[0].payload["reason"] == "interrupted"


async def test_escape_twice_interrupts_but_once_does_not(tmp_path: Path) -> None:
    clock = FakeClock()
    with ScriptedServer({"responses": [bash("sleep 60"), {"content": "never"}]}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock)
        async with app.run_test() as pilot:
            await _ready(pilot, app)
            await pilot.press(*"wait", "enter")
            assert await wait_until(pilot, lambda: running(rec))
            await pilot.press("escape")
            clock.advance(2)  # too slow to count as a double press
            await pilot.press("escape")
            await pilot.pause(0.2)
            assert not rec.of("turn_ended")
            await pilot.press("escape")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            await pilot.press("ctrl+q")
    assert rec.of("turn_ended")[0].payload["reason"] == "interrupted"


async def test_up_walks_the_prompt_history(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        prompt.past.add("first")
        prompt.past.add("second")
        await pilot.press("up")
        assert prompt.text == "second"
        await pilot.press("up")
        assert prompt.text == "first"
        await pilot.press("down", "down")
        assert prompt.text == ""


async def test_ctrl_j_inserts_a_newline_and_enter_sends(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    sent: dict[int, str] = {}  # the hook sees a message at every hop it bubbles through

    def hook(m: object) -> None:
        if isinstance(m, PromptInput.Submitted):
            sent[id(m)] = m.text

    async with app.run_test(message_hook=hook) as pilot:
        await pilot.press("a", "ctrl+j", "b")
        assert app.query_one(PromptInput).text == "a\nb"
        await pilot.press("enter")
        await pilot.pause()
    assert list(sent.values()) == ["a\nb"]
