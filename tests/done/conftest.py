"""A real tiny Python project with a real pytest gate, driven through `cerveau run --json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# A real pytest run on the project; plugin autoload off because this venv's plugins (textual
# snapshots, hypothesis) cost seconds per run and the tiny project needs none of them.
GATE = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"

CALC_BROKEN = "def add(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def make_project(ws: Path, files: dict[str, str], extra_config: str = "") -> Path:
    for rel, text in {"tests/__init__.py": "", **files}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / ".cerveau").mkdir(exist_ok=True)
    (ws / ".cerveau" / "config.toml").write_text(
        f'[done]\nprotected = ["tests/**"]\n{extra_config}'
        f'[[done.criteria]]\nname = "tests"\ncommand = "{GATE}"\n'
    )
    return ws


def run_cli(ws: Path, server_url: str, task: str, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    env = {**os.environ, "CERVEAU_CONFIG": str(ws.parent / "no-user-config.toml")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cerveau_tui",
            "run",
            "--json",
            "--workspace",
            str(ws),
            "--server",
            server_url,
            # make_project's criteria are commands: a workspace config applies them once trusted.
            "--trust-workspace-config",
            *extra,
            task,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert events, proc.stderr[-2000:]
    return proc.returncode, events


def of(events: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in events if e["type"] == type_]


def ended(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The turn_ended payload. Not necessarily the last event: after_turn hooks (lessons, notes)
    run after it, by design, and may emit theirs."""
    ends = [e for e in events if e["type"] == "turn_ended"]
    assert len(ends) == 1, [e["type"] for e in events[-6:]]
    return ends[0]["payload"]


@pytest.fixture
def project(tmp_path: Path):
    def build(files: dict[str, str] | None = None, extra_config: str = "") -> Path:
        ws = tmp_path / "ws"
        ws.mkdir(exist_ok=True)
        return make_project(
            ws, files or {"calc.py": CALC_BROKEN, "tests/test_calc.py": TEST_CALC}, extra_config
        )

    return build
