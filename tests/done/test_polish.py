"""Polish on green, through the CLI against the scripted server with a real pytest gate: one
bounded round after the gate passes, kept when the gate stays green, reverted to the green
checkpoint when it goes red, skipped when there is nothing to polish."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import CALC_FIXED, TEST_CALC, ended, of, run_cli
from .test_scenarios import edit, write

DEBUGGED = "def add(a, b):\n    print('debug', a, b)\n    return a + b\n"


def polish(events: list[dict]) -> list[tuple[str, str]]:
    return [(p["result"], p["reason"]) for p in of(events, "polish")]


def test_a_polish_that_keeps_the_gate_green_is_kept(project) -> None:
    ws = project()
    script = [write("calc.py", DEBUGGED), {"content": "Fixed."}, write("calc.py", CALC_FIXED)]
    script.append({"content": "Removed the debug print."})
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        asked = srv.requests[2]["messages"][-1]["content"]
    assert "polish round" in asked and "debug output" in asked
    assert [r for r, _ in polish(events)] == ["kept"]
    assert (ws / "calc.py").read_text() == CALC_FIXED
    end = ended(events)
    assert (end["reason"], end["verification"], end["message"]) == ("completed", "passed", "Fixed.")


def test_a_polish_that_turns_the_gate_red_is_rolled_back_and_the_green_result_stands(
    project,
) -> None:
    ws = project()
    script = [write("calc.py", CALC_FIXED), {"content": "Fixed."}]
    script += [edit("calc.py", "a + b", "a * b"), {"content": "Simplified."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    assert [r for r, _ in polish(events)] == ["reverted"]
    assert (ws / "calc.py").read_text() == CALC_FIXED
    end = ended(events)
    assert (end["reason"], end["verification"], end["unmet"]) == ("completed", "passed", [])


def test_a_polish_out_of_rounds_is_checked_without_waiting_for_an_answer(project) -> None:
    ws = project(extra_config="polish_max_iterations = 1\n")
    script = [write("calc.py", CALC_FIXED), {"content": "Fixed."}]
    script += [edit("calc.py", "a + b", "a * b"), edit("calc.py", "a * b", "a ** b")]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        requests = len(srv.requests)
    assert requests == 3  # the second polish edit was never asked for
    assert [r for r, _ in polish(events)] == ["reverted"]
    assert (ws / "calc.py").read_text() == CALC_FIXED


def test_polish_is_skipped_when_nothing_was_written_this_turn(project) -> None:
    ws = project(files={"calc.py": CALC_FIXED, "tests/test_calc.py": TEST_CALC})
    with ScriptedServer([{"content": "Nothing to do."}]) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    assert polish(events) == [("skipped", "nothing written this turn")]


def test_polish_is_skipped_when_it_is_off(project) -> None:
    ws = project(extra_config="polish = false\n")
    with ScriptedServer([write("calc.py", CALC_FIXED), {"content": "Fixed."}]) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        requests = len(srv.requests)
    assert polish(events) == [("skipped", "polish is off ([done] polish = false)")]
    assert requests == 2


def test_polish_is_skipped_without_a_gate(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with ScriptedServer([write("notes.txt", "hello\n"), {"content": "Wrote it."}]) as srv:
        _, events = run_cli(ws, srv.url, "write a note")
    assert polish(events) == [("skipped", "no done gate in use")]


def test_polish_without_a_gate_is_said_once_per_session_not_at_every_turn(tmp_path: Path) -> None:
    from cerveau_tui.bus import Emitter
    from cerveau_tui.config import load_settings
    from cerveau_tui.provider.llama import LlamaProvider
    from cerveau_tui.session import build_session

    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(ws, environ={}, user_config=tmp_path / "none.toml")
    script = [write("a.txt", "one\n"), {"content": "Wrote a."}]
    script += [write("b.txt", "two\n"), {"content": "Wrote b."}]
    seen: list[dict] = []
    with ScriptedServer(script) as srv:
        bus = Emitter()
        bus.subscribe(lambda e: seen.append({"type": e.type, "payload": e.payload}))
        session = build_session(settings, bus=bus, provider=LlamaProvider(srv.url))
        try:
            session.engine.run("write a")
            session.engine.run("write b")
        finally:
            session.close()
    assert (ws / "b.txt").read_text() == "two\n"
    assert polish(seen) == [("skipped", "no done gate in use")]
