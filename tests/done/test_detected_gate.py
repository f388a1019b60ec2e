"""The gate without configuration: `cerveau run --gate auto` on a Python project with tests and NO
`.cerveau/config.toml` runs the detected check (pytest, found by the adapter), through the real
CLI against the scripted server, with the real sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import CALC_BROKEN, CALC_FIXED, TEST_CALC, ended, of, run_cli
from .test_scenarios import edit, write


def bare_project(ws: Path, calc: str = CALC_BROKEN) -> Path:
    """A Python project as a new user has it: code and tests, no harness config at all."""
    for rel, text in {
        "calc.py": calc,
        "tests/__init__.py": "",
        "tests/test_calc.py": TEST_CALC,
    }.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


def test_gate_auto_refuses_a_false_done_on_a_failing_project_with_no_config(tmp_path: Path) -> None:
    ws = bare_project(tmp_path / "ws")
    script = [{"content": "Fixed."}, edit("calc.py", "a - b", "a + b"), {"content": "Fixed now."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass", "--gate", "auto")
        told = srv.requests[1]["messages"][-1]["content"]
    assert not (ws / ".cerveau" / "config.toml").exists()
    checks = of(events, "check")
    assert checks[0]["precheck"] and checks[0]["unmet"] == ["gate"]
    # The first "Fixed." was not taken as done: the model read pytest's failure instead.
    assert told.startswith("[harness]") and "test_add" in told
    end = ended(events)
    assert (end["reason"], end["verification"], end["unmet"]) == ("completed", "passed", [])


def test_without_the_flag_an_undecided_gate_runs_no_check_as_before(tmp_path: Path) -> None:
    ws = bare_project(tmp_path / "ws")
    # Undecided said in so many words: headless, an unset gate is the detected one (issue 22).
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "config.toml").write_text('[done]\ngate = ""\n')
    with ScriptedServer([{"content": "Fixed."}]) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    assert of(events, "check") == []
    assert ended(events)["reason"] == "completed"
    # Not a silent default: the person is told a check exists and how to use it.
    said = [n["text"] for n in of(events, "notice") if "no done gate" in n["text"]]
    assert len(said) == 1 and "python3 -m pytest -q" in said[0] and "--gate auto" in said[0]


def test_gate_off_runs_no_check(tmp_path: Path) -> None:
    ws = bare_project(tmp_path / "ws")
    with ScriptedServer([{"content": "Fixed."}]) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass", "--gate", "off")
    assert of(events, "check") == []


def test_a_command_given_as_the_gate_is_run_as_the_check(tmp_path: Path) -> None:
    ws = bare_project(tmp_path / "ws")
    with ScriptedServer([{"content": "Fixed."}, {"content": "Really."}]) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass", "--gate", "test -f DONE")
    assert of(events, "check")[0]["unmet"] == ["gate"]
    assert ended(events)["reason"] != "completed"


def test_the_red_precheck_applies_to_the_detected_gate(tmp_path: Path) -> None:
    ws = bare_project(tmp_path / "ws", calc=CALC_FIXED)
    with ScriptedServer([{"content": "Nothing to do."}]) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass", "--gate", "auto")
    assert any("already passes before any change" in n["text"] for n in of(events, "notice"))


def test_weakening_the_tests_is_caught_under_the_detected_gate_too(tmp_path: Path) -> None:
    # No config names protected paths: the adapter's own (the tests) protect the detected check.
    ws = bare_project(tmp_path / "ws")
    weak = "def test_add():\n    assert True\n"
    script = [write("tests/test_calc.py", weak), {"content": "Tests pass."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass", "--gate", "auto")
    end = ended(events)
    assert end["touched_protected"] == ["tests/test_calc.py"]
    assert end["verification"] == "failed" and end["reason"] != "completed"


def test_doctor_json_names_the_detected_check_and_whether_it_is_in_use(tmp_path: Path) -> None:
    ws = bare_project(tmp_path / "ws")
    env = {**os.environ, "CERVEAU_CONFIG": str(tmp_path / "no-user-config.toml")}
    command = [sys.executable, "-m", "cerveau_tui", "doctor", "--json", "--workspace", str(ws)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    gate = json.loads(proc.stdout)["gate"]
    assert "pytest" in gate["detected"] and gate["stack"] == "python"
    assert (gate["in_use"], gate["setting"]) == (False, "")
    (ws / ".cerveau").mkdir(exist_ok=True)  # made by the proof (sandboxed)
    (ws / ".cerveau" / "config.toml").write_text('[done]\ngate = "auto"\n')
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    gate = json.loads(proc.stdout)["gate"]
    assert gate["in_use"] is True and "pytest" in gate["command"]


def test_a_pytest_module_planted_in_the_workspace_does_not_pass_the_detected_gate(
    tmp_path: Path,
) -> None:
    # `python3 -m pytest` imports the workspace's own pytest.py first: written, it is the check.
    ws = bare_project(tmp_path / "ws")
    fake = "import sys\nprint('1 passed')\nsys.exit(0)\n"
    script = [write("pytest.py", fake), {"content": "Tests pass."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass", "--gate", "auto")
    end = ended(events)
    assert end["touched_protected"] == ["pytest.py"]
    assert end["verification"] == "failed" and end["reason"] != "completed"


def test_headless_with_the_gate_unset_anywhere_runs_the_detected_check(tmp_path: Path) -> None:
    # Nobody to ask headless: without a check the false "done" below would be silent.
    ws = bare_project(tmp_path / "ws")
    script = [{"content": "Fixed."}, edit("calc.py", "a - b", "a + b"), {"content": "Fixed now."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    checks = of(events, "check")
    assert checks[0]["precheck"] and checks[0]["unmet"] == ["gate"]
    end = ended(events)
    assert (end["reason"], end["verification"], end["unmet"]) == ("completed", "passed", [])
    assert (ws / "calc.py").read_text() == CALC_FIXED
