"""The Python stack: pytest as the gate, ruff as the autofixer, pytest's output as errors."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ..done.pytest_lines import E_LINE, EXC_LINE, SUMMARY
from .base import RunCommand, normalise, unique
from .python_detect import project_check

_FIXED = re.compile(r"(\d+) fixed")
_REFORMATTED = re.compile(r"(\d+) files? reformatted")
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".cerveau", ".tox"}


class PythonAdapter:
    name = "python"

    def __init__(self) -> None:
        self._ruff_probed = False
        self._ruff: str | None = None

    def detect(self, workspace: Path) -> bool:
        if (workspace / "pyproject.toml").is_file() or (workspace / "setup.py").is_file():
            return True
        return any(workspace.glob("*.py")) or any(workspace.glob("*/*.py"))

    def gate_command(self, workspace: Path) -> str | None:
        """What the project says it runs (python_detect.py: tox, nox, Makefile, pytest's
        config, the suite's shape), else pytest, when there are tests to run; None otherwise (a
        suite of nothing "passes", and a gate that always passes would make every "done" look
        checked)."""
        found = self._project_check(workspace)
        return found[0] if found else None

    def gate_source(self, workspace: Path) -> str:
        """Where the detected command was read ("tox.ini", "Makefile", ...); "" for the default."""
        found = self._project_check(workspace)
        return found[1] if found else ""

    @staticmethod
    def _project_check(workspace: Path) -> tuple[str, str] | None:
        # Shallow on purpose: rglob would walk a venv of thousands of files to answer this.
        patterns = ("test_*.py", "*_test.py", "*/test_*.py", "*/*_test.py", "tests/*/test_*.py")
        files = [p for pattern in patterns for p in workspace.glob(pattern)]
        files = [p for p in files if not set(p.relative_to(workspace).parts) & _SKIP_DIRS]
        if not files:
            return None
        # The project's own environment when it has one: its pytest and its dependencies, not
        # whatever `python3` is first on PATH. Absolute, because the original-tests re-check
        # runs the same command in a scratch copy that leaves environments out.
        venv = workspace / ".venv" / "bin" / "python"
        python = shlex.quote(str(venv)) if venv.is_file() else "python3"
        found = project_check(workspace, sorted(files))
        if found is None:
            return f"{python} -m pytest -q", ""
        return found.command(python), found.source

    def proof_command(self, command: str) -> str | None:
        """A quick command that fails the way `command` would if it cannot run at all in the
        interpreter it names: `import pytest` for pytest (issue 33: as an ordinary user whose
        python had no pytest, every check was "unmet, 0 errors"). unittest is in the standard
        library: nothing to prove."""
        words = shlex.split(command)
        if len(words) >= 3 and words[1:3] == ["-m", "pytest"]:
            return f"{shlex.quote(words[0])} -c 'import pytest'"
        return None

    def protected_paths(self, workspace: Path) -> list[str]:
        """What measures the detected pytest gate: the tests, and the files that change what
        `python3 -m pytest` runs (the workspace is first on sys.path, so a `pytest.py` written
        there IS the check). Surfaced when written, and a green check earned by editing them is
        re-run against the originals (done/original.py)."""
        return [
            "tests/**",
            "test_*.py",
            "*_test.py",
            "conftest.py",
            "pytest.ini",
            "pytest.py",
            "sitecustomize.py",
            "usercustomize.py",
        ]

    def autofix(
        self, workspace: Path, run: RunCommand, paths: list[str] | None = None
    ) -> list[str]:
        """`ruff check --fix` then `ruff format`, on the given Python files only.

        Only the files the session wrote: run over the whole tree, the first check of a session
        would reformat a person's entire codebase, a diff nobody asked for.
        """
        targets = [p for p in (paths or []) if p.endswith(".py") and (workspace / p).is_file()]
        if not targets:
            return []
        ruff = self._find_ruff(run)
        if ruff is None:
            return []
        quoted = " ".join(shlex.quote(p) for p in targets)
        changed: list[str] = []
        code, out = run(f"{ruff} check --fix --exit-zero {quoted}", 120.0)
        m = _FIXED.search(out or "")
        if code is not None and m and int(m.group(1)) > 0:
            changed.append(f"ruff check --fix fixed {m.group(1)} error(s) in {', '.join(targets)}")
        code, out = run(f"{ruff} format {quoted}", 120.0)
        m = _REFORMATTED.search(out or "")
        if code == 0 and m and int(m.group(1)) > 0:
            changed.append(
                f"ruff format reformatted {m.group(1)} file(s) among {', '.join(targets)}"
            )
        return changed

    def _find_ruff(self, run: RunCommand) -> str | None:
        # The workspace's own environment, as the sandbox sees it: our venv's ruff is not theirs.
        # Probed once per adapter (per session): two processes per answer add up on a stall.
        if self._ruff_probed:
            return self._ruff
        self._ruff_probed = True
        self._ruff = self._probe_ruff(run)
        return self._ruff

    @staticmethod
    def _probe_ruff(run: RunCommand) -> str | None:
        for candidate in ("ruff", "python3 -m ruff"):
            try:
                code, _ = run(f"{candidate} --version", 30.0)
            except Exception:  # noqa: BLE001 - a runner that cannot start it means "no ruff"
                continue
            if code == 0:
                return candidate
        return None

    def error_lines(self, output: str) -> list[str]:
        """One key per failing test when pytest's summary is there (the nodeid, without the
        message, so a test failing with a new value is still the same error); else the `E` lines;
        else the final line of each traceback."""
        raw = (output or "").splitlines()
        lines = [normalise(x) for x in raw]
        summary = []
        for line in lines:
            m = SUMMARY.match(line)
            if m:
                summary.append(f"{m.group(1)} {m.group(2)}")
        if summary:
            return unique(summary)
        e_lines = [f"E {normalise(m.group(1))}" for x in raw if (m := E_LINE.match(x))]
        if e_lines:
            return unique(e_lines)
        return unique([line for line in lines if EXC_LINE.match(line)])
