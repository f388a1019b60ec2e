"""The Python adapter reads what the project says it runs (issue 33): more-itertools' tox.ini and
Makefile run `python -m unittest`, whose load_tests also runs the doctests; the detected pytest
skipped them, so a doctest-only break passed the check."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from cerveau_tui.adapters.python import PythonAdapter

UNITTEST_SUITE = (
    "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
)
PYTEST_SUITE = "def test_a():\n    assert True\n"


def project(ws: Path, files: dict[str, str], suite: str = PYTEST_SUITE) -> Path:
    for rel, text in {"tests/__init__.py": "", "tests/test_x.py": suite, **files}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


def detected(ws: Path) -> tuple[str | None, str]:
    adapter = PythonAdapter()
    return adapter.gate_command(ws), adapter.gate_source(ws)


def test_tox_ini_default_testenv_commands_are_the_check(tmp_path: Path) -> None:
    tox = "[tox]\nenvlist = py311\n\n[testenv]\ncommands = {envpython} -m unittest -v {posargs}\n"
    ws = project(tmp_path, {"tox.ini": tox})
    assert detected(ws) == ("python3 -m unittest -v", "tox.ini")


def test_tox_ini_pytest_posargs_is_pytest(tmp_path: Path) -> None:
    tox = "[testenv]\ndeps = pytest\ncommands =\n    pytest {posargs}\n"
    ws = project(tmp_path, {"tox.ini": tox})
    assert detected(ws) == ("python3 -m pytest -q", "tox.ini")


def test_pyproject_tool_tox_native_commands(tmp_path: Path) -> None:
    pyproject = '[tool.tox.env_run_base]\ncommands = [["python", "-m", "unittest"]]\n'
    ws = project(tmp_path, {"pyproject.toml": pyproject})
    assert detected(ws) == ("python3 -m unittest", "pyproject.toml [tool.tox]")


def test_pyproject_tool_tox_legacy_ini(tmp_path: Path) -> None:
    pyproject = (
        '[tool.tox]\nlegacy_tox_ini = """\n[testenv]\ncommands = python -m unittest -v\n"""\n'
    )
    ws = project(tmp_path, {"pyproject.toml": pyproject})
    assert detected(ws) == ("python3 -m unittest -v", "pyproject.toml [tool.tox]")


def test_noxfile_session_run_is_read_as_text_and_never_imported(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    nox = (
        "import nox\n"
        f"open({str(marker)!r}, 'w').close()\n\n"
        "@nox.session\n"
        "def tests(session):\n"
        "    session.install('.')\n"
        "    session.run('python', '-m', 'unittest', 'discover')\n"
    )
    ws = project(tmp_path / "ws", {"noxfile.py": nox})
    assert detected(ws) == ("python3 -m unittest discover", "noxfile.py")
    assert not marker.exists()


def test_noxfile_run_outside_a_session_is_skipped(tmp_path: Path) -> None:
    nox = "def helper(session):\n    session.run('python', '-m', 'unittest')\n"
    ws = project(tmp_path, {"noxfile.py": nox})
    assert detected(ws) == ("python3 -m pytest -q", "")


def test_makefile_test_target_single_plain_command(tmp_path: Path) -> None:
    make = "build:\n\tpython -m build\n\ntest:\n\tpython -m unittest -v ${tests}\n"
    ws = project(tmp_path, {"Makefile": make})
    assert detected(ws) == ("python3 -m unittest -v", "Makefile")


def test_makefile_recipe_too_complex_is_skipped(tmp_path: Path) -> None:
    make = "test:\n\tcd tests && python -m unittest | tee log\n"
    ws = project(tmp_path, {"Makefile": make}, suite=UNITTEST_SUITE)
    # Falls through to the suite's shape, not to a guess at the pipe.
    assert detected(ws) == ("python3 -m unittest", "unittest TestCase suites, pytest not declared")


def test_makefile_variable_set_in_the_makefile_is_not_plain(tmp_path: Path) -> None:
    make = "ARGS = --failfast -k slow\ntest:\n\tpython -m unittest $(ARGS)\n"
    ws = project(tmp_path, {"Makefile": make})
    assert detected(ws) == ("python3 -m pytest -q", "")


def test_pyproject_pytest_ini_options_is_pytest(tmp_path: Path) -> None:
    pyproject = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    ws = project(tmp_path, {"pyproject.toml": pyproject}, suite=UNITTEST_SUITE)
    assert detected(ws) == ("python3 -m pytest -q", "pyproject.toml [tool.pytest.ini_options]")


def test_setup_cfg_tool_pytest_is_pytest(tmp_path: Path) -> None:
    ws = project(tmp_path, {"setup.cfg": "[tool:pytest]\naddopts = -ra\n"}, suite=UNITTEST_SUITE)
    assert detected(ws) == ("python3 -m pytest -q", "setup.cfg [tool:pytest]")


def test_load_tests_suite_is_run_by_unittest(tmp_path: Path) -> None:
    suite = (
        "import doctest\nimport unittest\n\n\n"
        "def load_tests(loader, tests, ignore):\n    return tests\n\n\n"
        "class T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    )
    # pytest named in the deps does not change it: pytest ignores load_tests and its doctests.
    ws = project(tmp_path, {"requirements-dev.txt": "pytest\n"}, suite=suite)
    assert detected(ws) == ("python3 -m unittest", "load_tests in the test files")


def test_testcase_only_suite_without_pytest_declared_is_unittest(tmp_path: Path) -> None:
    ws = project(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n"}, suite=UNITTEST_SUITE)
    assert detected(ws)[0] == "python3 -m unittest"


def test_testcase_only_suite_with_pytest_declared_stays_pytest(tmp_path: Path) -> None:
    pyproject = "[project]\nname = 'x'\n[project.optional-dependencies]\ntest = ['pytest']\n"
    ws = project(tmp_path, {"pyproject.toml": pyproject}, suite=UNITTEST_SUITE)
    assert detected(ws) == ("python3 -m pytest -q", "")


def test_tests_folder_without_init_is_discovered_by_name(tmp_path: Path) -> None:
    ws = project(tmp_path, {}, suite=UNITTEST_SUITE)
    (ws / "tests" / "__init__.py").unlink()
    assert detected(ws)[0] == "python3 -m unittest discover -s tests -t ."


def test_precedence_tox_over_makefile_over_pytest_config(tmp_path: Path) -> None:
    files = {
        "tox.ini": "[testenv]\ncommands = python -m unittest -v\n",
        "Makefile": "test:\n\tpython -m pytest\n",
        "pyproject.toml": "[tool.pytest.ini_options]\n",
    }
    ws = project(tmp_path, files)
    assert detected(ws)[1] == "tox.ini"
    (ws / "tox.ini").unlink()
    assert detected(ws) == ("python3 -m pytest -q", "Makefile")
    (ws / "Makefile").unlink()
    assert detected(ws)[1] == "pyproject.toml [tool.pytest.ini_options]"


def test_no_test_files_means_no_check_whatever_tox_says(tmp_path: Path) -> None:
    (tmp_path / "tox.ini").write_text("[testenv]\ncommands = python -m unittest\n")
    (tmp_path / "mod.py").write_text("x = 1\n")
    assert detected(tmp_path)[0] is None


def test_the_project_venv_python_runs_the_projects_runner(tmp_path: Path) -> None:
    ws = project(tmp_path, {"tox.ini": "[testenv]\ncommands = python -m unittest\n"})
    (ws / ".venv" / "bin").mkdir(parents=True)
    (ws / ".venv" / "bin" / "python").write_text("")
    assert detected(ws)[0] == f"{ws}/.venv/bin/python -m unittest"


def test_a_fifo_named_tox_ini_does_not_hang_detection(tmp_path: Path) -> None:
    ws = project(tmp_path, {"Makefile": "test:\n\tpython -m unittest\n"})
    os.mkfifo(ws / "tox.ini")
    result: list[tuple[str | None, str]] = []
    worker = threading.Thread(target=lambda: result.append(detected(ws)), daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():  # unblock the reader so the thread ends, then fail
        fd = os.open(ws / "tox.ini", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    assert result == [("python3 -m unittest", "Makefile")]
