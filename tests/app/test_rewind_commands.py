"""The TUI's rewind list names the points before the person's `!cmd`s too (as `cerveau rewind
--list --all` does), with the same columns as a turn's (its number, `T.k` for the k-th command
after turn T; the command; the time; the files it changed; +/- lines), and Enter on one rewinds
to just before that command: checked from the host side (the files) and in the next request."""

from __future__ import annotations

import json
from pathlib import Path

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.screens.rewind import RewindListScreen, RewindScreen, TurnRow, row_text
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, engine_app, press_alone, wait_until


def _write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


SCRIPT = [
    _write("a.txt", "one\ntwo\n"),
    {"content": "written"},
    {"content": "after the rewind"},
]


async def _ready(pilot, app: CerveauApp) -> None:
    assert await wait_until(
        pilot, lambda: app.runner is not None and app.runner.session is not None
    )


async def test_a_persons_command_is_listed_and_rewound_to(tmp_path: Path) -> None:
    clock = FakeClock()
    with ScriptedServer({"responses": SCRIPT}) as srv:
        app, rec = engine_app(tmp_path, srv.url, clock)
        async with app.run_test(size=(140, 45)) as pilot:
            await _ready(pilot, app)
            ws = app.settings.workspace
            await pilot.press(*"write a", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")) and not app.busy)
            await pilot.press(*"!printf 'x\\ny\\nz\\n' > a.txt && echo b > b.txt", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("tool_result")) and not app.busy)
            assert (ws / "b.txt").exists()
            await pilot.press("escape", "escape")
            assert await wait_until(pilot, lambda: isinstance(app.screen, RewindListScreen))
            screen = app.screen
            assert isinstance(screen, RewindListScreen)
            rows = [r for r in screen.rows if isinstance(r, TurnRow)]
            assert [(r.label, r.command) for r in rows] == [("1", False), ("1.1", True)]
            cmd = rows[1]
            assert cmd.task.startswith("!printf") and cmd.files_changed == 2
            assert (cmd.added, cmd.removed) == (4, 2)  # a.txt: 3 lines for 2, b.txt: 1 line
            text = str(row_text(cmd, 60))
            assert "1.1" in text and "!printf" in text and "2 files" in text and "+4 -2" in text
            assert cmd.at != "?"
            await pilot.press("enter")  # the newest row is selected: the command's
            assert await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
            dialog = app.screen
            assert isinstance(dialog, RewindScreen)
            assert "your command 1.1" in str(dialog.query_one("#head").render())
            assert "just before the command" in str(dialog.query_one("#what").render())
            await press_alone(pilot, clock, "b")
            assert await wait_until(pilot, lambda: bool(rec.of("rewound")))
            assert await wait_until(pilot, lambda: not (ws / "b.txt").exists())
            assert (ws / "a.txt").read_text() == "one\ntwo\n"  # as turn 1 left it
            said = rec.of("rewound")[-1].payload
            assert said["to"].startswith("before !printf") and said["turn"] == 0
            ended = len(rec.of("turn_ended"))
            await pilot.press(*"and now", "enter")
            assert await wait_until(pilot, lambda: len(rec.of("turn_ended")) > ended)
            await pilot.press("ctrl+q")
        sent = json.dumps(srv.requests[-1]["messages"])
    assert "write a" in sent and "and now" in sent
    assert "printf" not in sent  # the command's exchange was cut with it
