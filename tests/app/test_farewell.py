"""The last line after quitting names how to continue the session (issue 33: it printed
nothing), with flags the CLI really has."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from cerveau_tui.app.farewell import continue_line
from cerveau_tui.cli import build_parser
from cerveau_tui.history import History, Message, Origin
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import engine_app, wait_until


def _session(workspace: Path, *messages: Message) -> Any:
    return SimpleNamespace(
        log=SimpleNamespace(session_id="20261204-223610-ab12"),
        settings=SimpleNamespace(workspace=workspace),
        engine=SimpleNamespace(loop_state=SimpleNamespace(history=History(messages))),
    )


def test_a_session_the_person_spoke_in_ends_with_how_to_continue_it(tmp_path: Path) -> None:
    line = continue_line(_session(tmp_path, Message.user("fix the test")), tmp_path)
    assert line is not None
    assert "cerveau --continue" in line and "cerveau --resume 20261204-223610-ab12" in line


def test_a_session_with_nothing_said_prints_nothing(tmp_path: Path) -> None:
    assert continue_line(_session(tmp_path, Message.harness("note")), tmp_path) is None


def test_a_session_started_for_another_folder_names_it(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    line = continue_line(_session(ws, Message.user("ls", Origin.SHELL)), tmp_path)
    assert line is not None and f"cerveau -w {ws} --continue" in line


def test_the_flags_the_line_names_are_the_clis() -> None:
    parser = build_parser()
    assert parser.parse_args(["--continue"]).resume == "last"
    assert parser.parse_args(["--resume", "20261204-223610-ab12"]).resume == "20261204-223610-ab12"
    assert parser.parse_args(["-w", "/tmp", "--continue"]).workspace == Path("/tmp")


async def test_the_line_is_read_from_a_real_session_after_a_bang_command(tmp_path: Path) -> None:
    # Found in tmux: the engine's history iterates wire dicts; the line must read the session
    # the app really holds (it crashed the quit with an AttributeError).
    with ScriptedServer({"responses": [{"content": "unused"}]}) as srv:
        app, rec = engine_app(tmp_path, srv.url)
        async with app.run_test() as pilot:
            assert await wait_until(pilot, lambda: app.runner.session is not None)
            await pilot.press(*"!echo hi", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("tool_result")) and not app.busy)
            session = app.runner.session
            line = continue_line(session, app.settings.workspace)
            await pilot.press("ctrl+q")
    assert line is not None and f"--resume {session.log.session_id}" in line
