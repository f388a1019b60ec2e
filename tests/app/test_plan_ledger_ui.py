"""The plan views render the report the session sends; the UI thread hashes no file (issue 22).

Before, the PlanFeed kept its own copy of the plan events and ran build_report_at with its own
fingerprinter on the UI thread after every write: blake3 on the thread that draws the screen,
and a fourth holder of the plan that could disagree with the model's guidance."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.start import default_factory
from cerveau_tui.app.widgets.plan_strip import PlanStrip
from cerveau_tui.config import Settings
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

from .helpers import FakeClock, engine_app, wait_until

PLAN = [
    {"id": "1", "title": "Write the parser", "files": ["parser.py"]},
    {"id": "2", "title": "Write the cli", "files": ["cli.py"]},
]
SCRIPT = [
    {"tool_calls": [{"name": "commit_plan", "arguments": {"steps": PLAN}}]},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "parser.py", "content": "x\n"}}]},
    {"content": "the parser is written"},
]


@pytest.fixture
def hashing_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The thread of every file hash and workspace scan any fingerprinter makes."""
    seen: list[int] = []
    hash_file, scan = Fingerprinter.hash_file, Fingerprinter.scan

    def recorded_hash(self: Fingerprinter, rel: str) -> Any:
        seen.append(threading.get_ident())
        return hash_file(self, rel)

    def recorded_scan(self: Fingerprinter) -> Any:
        seen.append(threading.get_ident())
        return scan(self)

    monkeypatch.setattr(Fingerprinter, "hash_file", recorded_hash)
    monkeypatch.setattr(Fingerprinter, "scan", recorded_scan)
    return seen


async def test_the_plan_strip_shows_the_sessions_report_without_hashing_on_the_ui_thread(
    tmp_path: Path, hashing_threads: list[int]
) -> None:
    with ScriptedServer({"responses": SCRIPT}) as srv:
        app, rec = engine_app(tmp_path, srv.url, FakeClock())
        async with app.run_test() as pilot:
            ui_thread = threading.get_ident()
            assert await wait_until(pilot, lambda: app.runner.session is not None)
            await pilot.press(*"write the parser and the cli", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            strip = app.query_one(PlanStrip)
            assert await wait_until(
                pilot, lambda: strip.report is not None and strip.report.done_count == 1
            )
            shown = [str(s.status) for s in strip.report.steps]
            sent = [s["status"] for s in rec.of("plan_report")[-1].payload["steps"]]
            await pilot.press("ctrl+q")
    assert shown == sent == ["done_unconfirmed", "pending"]
    assert hashing_threads, "the session's worker reconciled the plan with the disk"
    assert ui_thread not in hashing_threads


async def test_a_resumed_session_shows_its_restored_plan_before_any_turn(
    tmp_path: Path, hashing_threads: list[int]
) -> None:
    """The redraw carries the stored plan events, but the feed renders only what the session
    sends: the restored ledger (its writes too) reconciled on the worker at resume."""
    with ScriptedServer({"responses": SCRIPT}) as srv:
        app, rec = engine_app(tmp_path, srv.url, FakeClock())
        async with app.run_test() as pilot:
            assert await wait_until(pilot, lambda: app.runner.session is not None)
            await pilot.press(*"write the parser", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")))
            await pilot.press("ctrl+q")
    hashing_threads.clear()
    with ScriptedServer({"responses": [{"content": "unused"}]}) as srv:
        settings = Settings(workspace=tmp_path / "ws", server_url=srv.url)
        resumed = CerveauApp(
            settings,
            session_factory=default_factory(settings, "last"),
            clock=FakeClock(),
            save_setting=lambda k, v: None,
        )
        async with resumed.run_test() as pilot:
            ui_thread = threading.get_ident()
            strip = resumed.query_one(PlanStrip)
            assert await wait_until(pilot, lambda: strip.report is not None)
            shown = [str(s.status) for s in strip.report.steps]
            await pilot.press("ctrl+q")
    assert shown == ["done_unconfirmed", "pending"]
    assert ui_thread not in hashing_threads
