"""The adapters: detection, gate command, error lines, autofix with a real ruff."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cerveau_tui.adapters.generic import GenericAdapter
from cerveau_tui.adapters.python import PythonAdapter
from cerveau_tui.adapters.registry import AdapterRegistry
from cerveau_tui.done.sandboxed import run_in_sandbox
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.none import NoSandbox

PYTEST_OUT = """\
F.F                                                                      [100%]
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(1, 2) == 3
E       assert -1 == 3
E        +  where -1 = add(1, 2)

test_calc.py:4: AssertionError
=========================== short test summary info ============================
FAILED test_calc.py::test_add - assert -1 == 3
FAILED test_calc.py::test_mul - assert 0x7f3a == 2
2 failed, 1 passed in 0.03s
"""


def test_a_python_project_is_detected_and_the_generic_one_is_the_fallback(tmp_path: Path) -> None:
    registry = AdapterRegistry()
    assert registry.detect(tmp_path).name == "generic"
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    assert registry.detect(tmp_path).name == "python"


def test_the_python_gate_is_pytest_when_there_are_tests(tmp_path: Path) -> None:
    adapter = PythonAdapter()
    assert adapter.gate_command(tmp_path) is None
    (tmp_path / "test_a.py").write_text("def test_a(): pass\n")
    assert adapter.gate_command(tmp_path) == "python3 -m pytest -q"
    assert GenericAdapter().gate_command(tmp_path) is None


def test_pytest_errors_are_one_key_per_failing_test_without_the_message() -> None:
    assert PythonAdapter().error_lines(PYTEST_OUT) == [
        "FAILED test_calc.py::test_add",
        "FAILED test_calc.py::test_mul",
    ]


def test_without_a_summary_the_e_lines_are_the_errors() -> None:
    out = "E       assert -1 == 3\nE       assert -1 == 3\n"
    assert PythonAdapter().error_lines(out) == ["E assert -1 == 3"]


def test_without_e_lines_a_tracebacks_last_line_is_the_error() -> None:
    out = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad at 0x7ffd12\n'
    assert PythonAdapter().error_lines(out) == ["ValueError: bad at 0x?"]


def test_generic_error_lines_skip_the_all_clear() -> None:
    out = "build: error: missing semicolon\n0 errors, 1 warning\nok\nFAILED: link\n"
    assert GenericAdapter().error_lines(out) == ["build: error: missing semicolon", "FAILED: link"]


def _runner_with_venv(ws: Path):
    # The workspace env in this test is our venv: put its bin first, as an activated env would.
    bindir = str(Path(sys.executable).parent)
    env_path = bindir + os.pathsep + os.environ.get("PATH", "")
    sandbox = NoSandbox()
    inner = run_in_sandbox(sandbox, ws)

    def run(command: str, timeout: float) -> tuple[int | None, str]:
        result = sandbox.run(
            CommandSpec(command, workspace=ws, timeout=timeout, env={"PATH": env_path})
        )
        return result.exit_code, result.output

    assert inner is not None
    return run


def test_autofix_fixes_and_formats_only_the_given_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\ndef f( x ):\n    return x\n")
    (tmp_path / "untouched.py").write_text("import sys\ndef g( y ):\n    return y\n")
    changed = PythonAdapter().autofix(tmp_path, _runner_with_venv(tmp_path), ["a.py"])
    assert any("ruff check --fix fixed 1" in c for c in changed)
    assert any("ruff format reformatted 1" in c for c in changed)
    assert (tmp_path / "a.py").read_text() == "def f(x):\n    return x\n"
    assert (tmp_path / "untouched.py").read_text() == "import sys\ndef g( y ):\n    return y\n"


def test_autofix_without_ruff_in_the_workspace_env_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\n")

    def run(command: str, timeout: float) -> tuple[int | None, str]:
        return 127, "sh: ruff: not found"

    assert PythonAdapter().autofix(tmp_path, run, ["a.py"]) == []
    assert (tmp_path / "a.py").read_text() == "import os\n"
