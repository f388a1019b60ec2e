"""Run the real `cerveau` CLI in a subprocess as a person (or an acceptance check) would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_cli(
    workspace: Path,
    server_url: str,
    task: str,
    *extra: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> tuple[int, list[dict[str, Any]], str]:
    """`cerveau run --json`; returns (exit code, events, stderr). The person's own config is kept
    out so a test sees only the workspace's settings."""
    full_env = {
        **os.environ,
        # Beside the workspace, never in it: a workspace holding the config folder is refused.
        "CERVEAU_CONFIG": str(
            Path(workspace).parent / f"{Path(workspace).name}.no-user-config.toml"
        ),
        **(env or {}),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cerveau_tui",
            "run",
            "--json",
            "--workspace",
            str(workspace),
            "--server",
            server_url,
            *extra,
            task,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, events, proc.stderr
