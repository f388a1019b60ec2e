"""The scripted sessions the protocol tests run: a gate project, a call, one `cerveau run`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

GATE = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"
CALC_BROKEN = "def add(a, b):\n    return a - b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def run(ws: Path, url: str, task: str, *extra: str) -> list[dict[str, Any]]:
    env = {**os.environ, "CERVEAU_CONFIG": str(ws.parent / "no-user-config.toml")}
    cmd = [sys.executable, "-m", "cerveau_tui", "run", "--json", "--workspace", str(ws)]
    cmd += ["--server", url, "--trust-workspace-config", *extra, task]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert events, proc.stderr[-2000:]
    return events


def project(ws: Path) -> Path:
    files = {"calc.py": CALC_BROKEN, "tests/__init__.py": "", "tests/test_calc.py": TEST_CALC}
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "config.toml").write_text(
        f'[done]\nprotected = ["tests/**"]\n[[done.criteria]]\nname = "tests"\ncommand = "{GATE}"\n'
    )
    return ws
