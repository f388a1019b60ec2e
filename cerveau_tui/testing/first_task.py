"""A new user's first task, bounded: a one-bug pytest project and a few turns of `cerveau run`.

Issue 24 tried this by hand on a fresh clone with the embedded SmolLM2: 14 model turns over 40
minutes and the done check never ran once. This is that trial as a repeatable run, small enough
for a loaded 2-core machine (a few turns, a few rounds each, a small reply cap): the real CLI, a
real server (the embedded model for tests/e2e/test_first_task_real.py and benchmarks/first_task.py),
the gate the python adapter detects (pytest), `--continue` between turns. What the rounds were
lost to is counted from the events by loop/guards/lost_rounds.py.

The project carries its own environment (`.venv` with pytest), made with the system python and
pytest copied from the harness's own: the detected gate prefers the project's environment, and
the sandbox shows the system, never the harness's home. A random model's commands run inside the
sandbox or not at all (headless, every crossing is denied).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"
#: Beside the workspace: the harness's config (none) and what it keeps there (the grant key).
HARNESS_DIR = ".cerveau-config"
#: pytest and what it imports, copied into the project's environment.
PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py")

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TEST_CALC = (
    "from calc import add, mul\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)
TURNS = (
    "The test in test_calc.py fails. Fix the bug in calc.py so that the tests pass.",
    "Go on: make the failing test pass.",
    "hello",
)


def make_project(workspace: Path) -> None:
    """calc.py with one bug (add subtracts), its tests, and `.venv` with pytest."""
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "calc.py").write_text(CALC, encoding="utf-8")
    (workspace / "test_calc.py").write_text(TEST_CALC, encoding="utf-8")
    make_venv(workspace)


def make_venv(workspace: Path) -> None:
    """`.venv` with pytest in the workspace, as a person's project has its own environment
    (benchmarks/task_bench.py gives one to every task that holds tests)."""
    venv = workspace / ".venv"
    python = SYSTEM_PYTHON if Path(SYSTEM_PYTHON).is_file() else sys.executable
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    for name in PYTEST_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        src = Path(spec.origin)
        if spec.submodule_search_locations:
            shutil.copytree(src.parent, site / src.parent.name, dirs_exist_ok=True)
        else:
            shutil.copy2(src, site / src.name)


@dataclass
class FirstTask:
    turns: list[list[dict[str, Any]]] = field(default_factory=list)  # each turn's events
    returncodes: list[int] = field(default_factory=list)
    stderr: str = ""

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e["payload"] for t in self.turns for e in t if e.get("type") == type_]


def run_first_task(
    workspace: Path,
    server_url: str,
    *,
    repo: Path = REPO,
    turns: tuple[str, ...] = TURNS,
    max_iterations: int = 4,
    max_tokens: int = 256,
    timeout: float = 150.0,
    temperature: float = 0.0,
) -> FirstTask:
    """Each turn through `cerveau run --json` (the later ones with `--continue`), the CLI of
    `repo` (another checkout measures the code before). Temperature 0 by default: one build's
    run repeats; above it, the server's `--seed` picks the sample (benchmarks/first_task.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CERVEAU_")}
    env.update(
        {
            # The harness's own files (this config, the grant key) in a folder of their own.
            "CERVEAU_CONFIG": str(workspace.parent / HARNESS_DIR / "config.toml"),
            "CERVEAU_TEMPERATURE": str(temperature),
            "CERVEAU_LIMITS__MAX_ITERATIONS": str(max_iterations),
            "CERVEAU_BASH_TIMEOUT_S": "20",
            "PYTHONPATH": str(repo),
        }
    )
    out = FirstTask()
    for i, task in enumerate(turns):
        cmd = [sys.executable, "-m", "cerveau_tui.cli", "run", "--json"]
        cmd += ["--continue"] if i else []
        cmd += ["--workspace", str(workspace), "--server", server_url]
        cmd += ["--max-tokens", str(max_tokens), task]
        try:
            proc = subprocess.run(
                cmd,
                cwd=repo,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            out.returncodes.append(-1)
            out.stderr += f"turn {i + 1} timed out after {timeout:.0f} s\n"
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
            out.turns.append(_events(stdout))
            continue
        out.returncodes.append(proc.returncode)
        out.stderr += proc.stderr
        out.turns.append(_events(proc.stdout))
    return out


def _events(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        if line.strip().startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return events
