"""Helpers for scenario tests that drive `cerveau run --json` against the scripted server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(workspace: Path, server_url: str, task: str, *extra: str, env: dict | None = None, timeout: float = 120):
    """Run the real CLI as a person would; return (exit code, events, stderr)."""
    full_env = {**os.environ, "CERVEAU_CONFIG": str(workspace / ".no-user-config.toml"), **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "run", "--json", "--workspace", str(workspace), "--server", server_url, *extra, task],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )
    events = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line:
            events.append(json.loads(line))
    return proc.returncode, events, proc.stderr


@pytest.fixture
def cli():
    return run_cli
