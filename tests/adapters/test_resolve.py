"""resolve_stack_for_run: which stack, its usual check, and the gate in force, per [done]."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.adapters.registry import resolve_stack_for_run
from cerveau_tui.config import Settings
from cerveau_tui.config_sections import CriterionConfig


def python_project(ws: Path, tests: bool = True) -> Path:
    (ws / "pyproject.toml").write_text("[project]\nname = 'calc'\n")
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    if tests:
        (ws / "tests").mkdir()
        (ws / "tests" / "test_calc.py").write_text("def test_add():\n    assert 1\n")
    return ws


def settings(ws: Path, gate: str = "", **done: object) -> Settings:
    s = Settings(workspace=ws)
    s.done.gate = gate
    for key, value in done.items():
        setattr(s.done, key, value)
    return s


def test_a_python_project_with_tests_is_detected_with_pytest_as_its_check(tmp_path: Path) -> None:
    run = resolve_stack_for_run(tmp_path, settings(python_project(tmp_path)))
    assert run.adapter.name == "python"
    assert run.detected == "python3 -m pytest -q"


def test_a_python_project_without_tests_has_no_usual_check(tmp_path: Path) -> None:
    run = resolve_stack_for_run(tmp_path, settings(python_project(tmp_path, tests=False), "auto"))
    assert (run.adapter.name, run.detected, run.command, run.in_use) == (
        "python",
        None,
        None,
        False,
    )


def test_an_empty_tests_folder_is_not_tests(tmp_path: Path) -> None:
    python_project(tmp_path, tests=False)
    (tmp_path / "tests").mkdir()
    assert resolve_stack_for_run(tmp_path, settings(tmp_path)).detected is None


def test_a_project_of_no_known_stack_is_generic_with_no_check(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    run = resolve_stack_for_run(tmp_path, settings(tmp_path, "auto"))
    assert (run.adapter.name, run.detected, run.in_use) == ("generic", None, False)


def test_the_projects_own_venv_runs_its_tests(tmp_path: Path) -> None:
    python_project(tmp_path)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    detected = resolve_stack_for_run(tmp_path, settings(tmp_path)).detected
    assert detected == f"{tmp_path}/.venv/bin/python -m pytest -q"


def test_undecided_means_no_gate_but_the_check_is_offered(tmp_path: Path) -> None:
    run = resolve_stack_for_run(tmp_path, settings(python_project(tmp_path)))
    assert (run.in_use, run.command, run.undecided) == (False, None, True)


def test_auto_puts_the_detected_check_in_force_with_the_tests_protected(tmp_path: Path) -> None:
    run = resolve_stack_for_run(tmp_path, settings(python_project(tmp_path), "auto"))
    assert (run.source, run.command) == ("detected", "python3 -m pytest -q")
    assert "tests/**" in run.protected and not run.undecided


def test_off_means_no_gate_and_nothing_offered(tmp_path: Path) -> None:
    run = resolve_stack_for_run(tmp_path, settings(python_project(tmp_path), "off"))
    assert (run.in_use, run.undecided) == (False, False)


def test_a_command_given_as_the_gate_is_the_gate(tmp_path: Path) -> None:
    run = resolve_stack_for_run(tmp_path, settings(python_project(tmp_path), "make check"))
    assert (run.source, run.command, run.protected) == ("command", "make check", ())


def test_written_criteria_win_over_the_gate_setting(tmp_path: Path) -> None:
    written = [CriterionConfig(name="lint", command="ruff check .")]
    run = resolve_stack_for_run(
        tmp_path, settings(python_project(tmp_path), "auto", criteria=written)
    )
    assert (run.source, run.command) == ("criteria", None)


def test_a_disabled_gate_stays_disabled_under_auto(tmp_path: Path) -> None:
    run = resolve_stack_for_run(tmp_path, settings(python_project(tmp_path), "auto", enabled=False))
    assert run.in_use is False
