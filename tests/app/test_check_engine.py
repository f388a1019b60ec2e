"""The done check in the TUI, end to end (issue 33): the real engine on a scripted server, a real
tiny project. The first request after a red precheck names the failing tests; Esc Esc while the
precheck runs stops it (its process gone, no marker it would write, no question raised)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from cerveau_tui.testing.proc_scan import sleeping
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import FakeClock, engine_app, wait_until

GATE = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"
BROKEN = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


def project(tmp_path: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (tmp_path / "ws" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ws" / rel).write_text(text)


def done(command: str) -> dict[str, Any]:
    return {"criteria": [{"name": "tests", "command": command}]}


async def _submit(pilot: Any, app: Any, text: str) -> None:
    assert await wait_until(pilot, lambda: app.runner.session is not None)
    await pilot.press(*text, "enter")


async def test_the_tuis_first_request_after_a_red_precheck_names_the_failing_tests(
    tmp_path: Path,
) -> None:
    project(tmp_path, BROKEN)
    with ScriptedServer({"responses": [{"content": "looking"}] * 6}) as srv:
        app, rec = engine_app(tmp_path, srv.url, FakeClock(), done=done(GATE))
        async with app.run_test() as pilot:
            await _submit(pilot, app, "look at calc")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")), steps=600)
            await pilot.press("ctrl+q")
        first = srv.requests[0]["messages"]
    said = "\n".join(str(m.get("content")) for m in first if m["role"] != "system")
    assert "tests/test_calc.py::test_add" in said


async def test_esc_esc_in_the_tui_during_the_precheck_stops_it(tmp_path: Path) -> None:
    token = "6.5432"
    project(tmp_path, {"notes.txt": "x\n"})
    with ScriptedServer({"responses": [{"content": "done"}]}) as srv:
        check = f"sleep {token}; touch marker"
        app, rec = engine_app(tmp_path, srv.url, FakeClock(), done=done(check))
        async with app.run_test() as pilot:
            await _submit(pilot, app, "fix the failing test")
            assert await wait_until(pilot, lambda: bool(sleeping(token)), steps=200)
            await pilot.press("escape", "escape")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")), steps=100)
            gone = sleeping(token)
            time.sleep(float(token) + 0.5)  # past the sleep: the marker would be there by now
            await pilot.press("ctrl+q")
    assert gone == [] and not (tmp_path / "ws" / "marker").exists()
    assert rec.of("turn_ended")[0].payload["reason"] == "interrupted"
    assert rec.of("approval_requested") == [] and srv.requests == []
