"""A check that cannot run is unavailable with its cause, never "unmet, 0 errors" (issue 33: as an
ordinary user whose python had no pytest, the detected check "ran" every turn as unmet, nothing
said why, and `doctor` called it in use)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cerveau_tui.adapters.registry import resolve_stack_for_run
from cerveau_tui.config import Settings
from cerveau_tui.done.criteria import Criterion, CriterionState, DoneSet, check
from cerveau_tui.done.findings import check_event, findings_of, merged
from cerveau_tui.done.sandboxed import proof_runner, run_in_sandbox
from cerveau_tui.protocol.describe import check_line
from cerveau_tui.sandbox.bubblewrap import find_bwrap
from cerveau_tui.sandbox.select import select_runner

from .test_detected_gate import bare_project

SYSTEM_PY = "/usr/bin/python3"
PYTEST = "python3 -m pytest -q"


def gate(command: str = PYTEST) -> DoneSet:
    return DoneSet((Criterion("gate", command),))


def test_no_module_named_the_runner_is_unavailable_with_its_cause() -> None:
    report = check(gate(), lambda c, t: (1, "/usr/bin/python3: No module named pytest\n"))
    assert report.states == {"gate": CriterionState.UNAVAILABLE}
    assert report.unmet() == []
    assert report.outputs["gate"].startswith("cannot run: No module named pytest")


def test_command_not_found_is_unavailable() -> None:
    report = check(gate("pytest -q"), lambda c, t: (127, "sh: 1: pytest: not found\n"))
    assert report.states == {"gate": CriterionState.UNAVAILABLE}
    assert "pytest: command not found" in report.outputs["gate"]


def test_a_test_failing_on_the_projects_own_import_still_fails() -> None:
    # The suite ran; a module of the project is missing: the model's to fix, so unmet.
    out = "E   ModuleNotFoundError: No module named 'calc'\n1 error in 0.1s\n"
    report = check(gate(), lambda c, t: (2, out))
    assert report.unmet() == ["gate"]


def test_the_check_event_and_chat_line_say_unavailable_and_why() -> None:
    report = check(gate(), lambda c, t: (1, "python3: No module named pytest\n"))
    found = merged(findings_of(report))
    event = check_event(report, [], PYTEST, found, True, False, False, 0.1)
    assert (event.state, event.cause) == ("unavailable", "cannot run: No module named pytest")
    assert (event.unmet, event.errors) == ([], 0)
    text, level = check_line(event) or ("", "")
    assert "cannot run: No module named pytest" in text and level == "warning"


# --- in the sandbox, with an interpreter that has no pytest --------------------------------------


def _no_pytest_python() -> None:
    if not os.path.exists(SYSTEM_PY):
        pytest.skip("no /usr/bin/python3")
    probe = subprocess.run([SYSTEM_PY, "-c", "import pytest"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("/usr/bin/python3 has pytest")
    if find_bwrap() is None:
        pytest.skip("bubblewrap is not installed")


def project_without_pytest(ws: Path) -> Path:
    """A project whose own environment (.venv, made without pip) has no pytest."""
    bare_project(ws)
    subprocess.run([SYSTEM_PY, "-m", "venv", "--without-pip", str(ws / ".venv")], check=True)
    return ws


def test_the_proof_in_the_sandbox_finds_pytest_missing(tmp_path: Path) -> None:
    _no_pytest_python()
    ws = project_without_pytest(tmp_path / "ws")
    settings = Settings(workspace=ws)
    runner = select_runner(settings)
    stack = resolve_stack_for_run(ws, settings, run=proof_runner(runner, ws))
    assert stack.cannot_run == "No module named pytest"
    assert stack.detected == f"{ws}/.venv/bin/python -m pytest -q"
    assert (stack.source, stack.command, stack.undecided) == ("none", None, False)
    assert "cannot run here: No module named pytest" in stack.why


def test_gate_auto_with_pytest_missing_is_not_put_in_force(tmp_path: Path) -> None:
    _no_pytest_python()
    ws = project_without_pytest(tmp_path / "ws")
    settings = Settings(workspace=ws)
    settings.done.gate = "auto"
    stack = resolve_stack_for_run(ws, settings, run=proof_runner(select_runner(settings), ws))
    assert (stack.in_use, stack.command) == (False, None)


def test_the_detected_check_run_in_the_sandbox_is_unavailable_not_unmet(tmp_path: Path) -> None:
    _no_pytest_python()
    ws = project_without_pytest(tmp_path / "ws")
    settings = Settings(workspace=ws)
    command = f"{ws}/.venv/bin/python -m pytest -q"
    report = check(gate(command), run_in_sandbox(select_runner(settings), ws))
    assert report.states == {"gate": CriterionState.UNAVAILABLE}
    assert "No module named pytest" in report.outputs["gate"]


def test_with_pytest_there_the_proof_passes(tmp_path: Path) -> None:
    # Control: the same project, the harness's own python (which has pytest) as its .venv.
    if find_bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    ws = bare_project(tmp_path / "ws")
    (ws / ".venv" / "bin").mkdir(parents=True)
    (ws / ".venv" / "bin" / "python").symlink_to(sys.executable)
    settings = Settings(workspace=ws)
    stack = resolve_stack_for_run(ws, settings, run=proof_runner(select_runner(settings), ws))
    assert (stack.cannot_run, stack.undecided) == ("", True)


def test_doctor_says_the_detected_check_cannot_run_here(tmp_path: Path) -> None:
    _no_pytest_python()
    ws = project_without_pytest(tmp_path / "ws")
    env = {**os.environ, "CERVEAU_CONFIG": str(tmp_path / "no-user-config.toml")}
    command = [sys.executable, "-m", "cerveau_tui", "doctor", "--workspace", str(ws)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    gate_line = next(x for x in proc.stdout.splitlines() if x.startswith("gate:"))
    assert "which cannot run here: No module named pytest" in gate_line
    assert "in use: none" in gate_line
