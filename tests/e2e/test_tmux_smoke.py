"""The real terminal path in the suite: scripts/tmux_smoke.sh drives `cerveau` in tmux against the
real llama-server (send-keys, capture-pane), checks the screen, quits with Ctrl+Q."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tmux_smoke.sh"


def test_the_tui_runs_a_turn_on_the_real_model_in_a_real_terminal(real_stack):
    if shutil.which("tmux") is None:
        pytest.fail("tmux is missing; scripts/setup.sh installs it")
    proc = subprocess.run([str(SCRIPT), real_stack], capture_output=True, text=True, timeout=840)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "smoke passed" in proc.stdout
