"""Rewind on the real app and the real engine, against a scripted model: three turns (the file
tools, a command that rewrites and deletes, a command that makes a folder tree), Esc Esc, turn 2,
both. Checked from the host side: every file's hash and mode as recorded just before turn 2, the
chat as it was then, the plan views as `build_report_at` says of that point; a person's edit made
in between is named and, kept, left as they wrote it; forward brings it all back."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.rewind_actions import FORWARD_HINT
from cerveau_tui.app.screens.rewind import ForwardRow, RewindListScreen, RewindScreen
from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine, UserMessage
from cerveau_tui.app.widgets.plan_strip import PlanStrip
from cerveau_tui.app.widgets.planner import PlannerPanel
from cerveau_tui.bus import Recorder
from cerveau_tui.plan.report import build_report_at
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, engine_app, press_alone, wait_until

PLAN = [
    {"id": "1", "title": "Write the parser", "files": ["parser.py"]},
    {"id": "2", "title": "Write the cli", "files": ["cli.py"]},
]
TASKS = ["write the parser", "write the cli and a data tree", "tidy up the parser"]


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


SCRIPT = [
    # turn 1: the file tools
    _call("commit_plan", steps=PLAN),
    _call("write_file", path="parser.py", content="def parse(s):\n    return s\n"),
    _call("write_file", path="notes.txt", content="first notes\n"),
    {"content": "the parser is written"},
    # turn 2: a command that rewrites one file and deletes another, one that makes a tree
    _call("write_file", path="cli.py", content="import parser\n"),
    _call("bash", command="printf 'def parse(s):\\n    return s.strip()\\n' > parser.py"),
    _call("bash", command="rm notes.txt && mkdir -p data/a/b && echo x > data/a/b/c.txt"),
    {"content": "the cli and the data tree are there"},
    # turn 3: more edits
    _call("write_file", path="parser.py", content="def parse(s):\n    return s.lower()\n"),
    _call("bash", command="chmod +x cli.py && rm -r data"),
    {"content": "tidied"},
]


def _state(ws: Path) -> dict[str, tuple[str, int]]:
    """Every file the person would see (not .cerveau): its sha256 and mode, from the host."""
    out = {}
    for p in sorted(ws.rglob("*")):
        rel = p.relative_to(ws).as_posix()
        if rel.split("/")[0] == ".cerveau" or not p.is_file():
            continue
        out[rel] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mode & 0o7777)
    return out


def _said(app: CerveauApp) -> str:
    chat = app.screen_stack[0].query_one(ChatView)
    return "\n".join(n.text for n in chat.query(NoticeLine))


def _asked(app: CerveauApp) -> list[str]:
    chat = app.screen_stack[0].query_one(ChatView)
    return [str(w.render()) for w in chat.query(UserMessage)]


async def _turn(pilot: Any, rec: Recorder, text: str) -> None:
    ended = len(rec.of("turn_ended"))
    await pilot.press(*text, "enter")
    assert await wait_until(pilot, lambda: len(rec.of("turn_ended")) > ended, steps=600)
    assert rec.of("turn_ended")[-1].payload["reason"] == "completed"


async def _three_turns(pilot: Any, app: CerveauApp, rec: Recorder) -> dict[str, tuple[str, int]]:
    """Runs the three turns; returns the workspace as it was just before turn 2."""
    assert await wait_until(
        pilot, lambda: app.runner is not None and app.runner.session is not None
    )
    ws = app.settings.workspace
    await _turn(pilot, rec, TASKS[0])
    before_2 = _state(ws)
    await _turn(pilot, rec, TASKS[1])
    assert not (ws / "notes.txt").exists() and (ws / "data/a/b/c.txt").exists()
    await _turn(pilot, rec, TASKS[2])
    assert await wait_until(pilot, lambda: not app.busy)
    return before_2


async def _rewind_dialog(pilot: Any, app: CerveauApp, turn: int) -> RewindScreen:
    await pilot.press("escape", "escape")
    assert await wait_until(pilot, lambda: isinstance(app.screen, RewindListScreen))
    screen = app.screen
    assert isinstance(screen, RewindListScreen)
    numbers = [getattr(r, "number", None) for r in screen.rows]
    assert numbers[:3] == [1, 2, 3]
    for _ in range(numbers.index(3) - numbers.index(turn)):
        await pilot.press("up")
    await pilot.press("enter")
    assert await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
    dialog = app.screen
    assert isinstance(dialog, RewindScreen)
    return dialog


async def test_three_turns_then_rewind_to_turn_2_both(tmp_path: Path) -> None:
    clock = FakeClock()
    with ScriptedServer({"responses": SCRIPT}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock)
        async with app.run_test(size=(140, 45)) as pilot:
            before_2 = await _three_turns(pilot, app, rec)
            ws = app.settings.workspace
            assert _state(ws) != before_2
            after_3 = _state(ws)
            dialog = await _rewind_dialog(pilot, app, 2)
            assert dialog.preview.conflicts == []
            await press_alone(pilot, clock, "b")
            assert await wait_until(pilot, lambda: bool(rec.of("rewound")))
            assert await wait_until(pilot, lambda: _asked(app) == [TASKS[0]])
            # the code: every file's bytes and mode as just before turn 2
            assert _state(ws) == before_2
            # the plan views follow: the report of that point, the same in both views
            strip, planner = app.query_one(PlanStrip), app.query_one(PlannerPanel)
            assert await wait_until(
                pilot, lambda: strip.report is not None and strip.report.done_count == 1
            )
            assert strip.report is planner.report
            cut = rec.of("turn_started")[1].seq
            offline = build_report_at([e for e in rec.events if e.seq < cut], ws)
            assert [str(s.status) for s in strip.report.steps] == [
                str(s.status) for s in offline.steps
            ]
            # forward, from the same list: turn 3's end again
            await pilot.press("escape", "escape")
            assert await wait_until(pilot, lambda: isinstance(app.screen, RewindListScreen))
            list_screen = app.screen
            assert isinstance(list_screen, RewindListScreen)
            assert isinstance(list_screen.rows[-1], ForwardRow)
            await pilot.press("down", "enter")
            assert await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
            await press_alone(pilot, clock, "f")
            assert await wait_until(pilot, lambda: len(rec.of("rewound")) == 2)
            assert await wait_until(pilot, lambda: _asked(app) == TASKS)
            assert _state(ws) == after_3
            await pilot.press("ctrl+q")


async def test_a_persons_edit_since_is_named_and_kept(tmp_path: Path) -> None:
    clock = FakeClock()
    with ScriptedServer({"responses": SCRIPT}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock)
        async with app.run_test(size=(140, 45)) as pilot:
            before_2 = await _three_turns(pilot, app, rec)
            ws = app.settings.workspace
            # the person, in their editor, between turns
            (ws / "parser.py").write_text("def parse(s):\n    return s  # mine\n")
            mine = _state(ws)["parser.py"]
            dialog = await _rewind_dialog(pilot, app, 2)
            assert dialog.preview.conflicts == ["parser.py"]
            assert "parser.py" in str(dialog.query_one("#conflicts").render())
            await press_alone(pilot, clock, "c")
            assert not rec.of("rewound") and dialog.asking_conflicts
            await press_alone(pilot, clock, "k")
            assert await wait_until(pilot, lambda: bool(rec.of("rewound")))
            now = _state(ws)
            assert now["parser.py"] == mine  # kept as the person wrote it
            assert {k: v for k, v in now.items() if k != "parser.py"} == {
                k: v for k, v in before_2.items() if k != "parser.py"
            }
            assert len(_asked(app)) == 3  # code only: the conversation is as it was
            # one line from the rewinder (what moved, what was kept), then the way back
            assert await wait_until(pilot, lambda: FORWARD_HINT in _said(app))
            lines = [t for t in _said(app).splitlines() if "rewind to turn 2" in t]
            assert len(lines) == 1 and "kept as you left them: parser.py" in lines[0]
            await pilot.press("ctrl+q")


async def test_conversation_only_keeps_the_files_and_the_next_request_is_cut(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    with ScriptedServer({"responses": [*SCRIPT, {"content": "again"}]}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock)
        async with app.run_test(size=(140, 45)) as pilot:
            await _three_turns(pilot, app, rec)
            ws = app.settings.workspace
            after_3 = _state(ws)
            await _rewind_dialog(pilot, app, 2)
            await press_alone(pilot, clock, "v")
            assert await wait_until(pilot, lambda: _asked(app) == [TASKS[0]])
            assert _state(ws) == after_3  # the conversation only: no file moved
            sent = len(srv.requests)
            await _turn(pilot, rec, "what is left to do")
            await pilot.press("ctrl+q")
        asked = json.dumps(srv.requests[sent]["messages"])
    assert TASKS[0] in asked and "what is left to do" in asked
    assert TASKS[1] not in asked and TASKS[2] not in asked
