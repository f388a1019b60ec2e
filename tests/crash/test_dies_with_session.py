"""A command the session started dies with it, under every backend, kill -9 included.

Checked from the host side: a throwaway "session" process runs a command through the backend
(one process in the foreground, one left in the background), we kill -9 the session, and no
process with the marker argument may be left in /proc.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from cerveau_tui.sandbox.bubblewrap import find_bwrap
from cerveau_tui.sandbox.landlock import landlock_abi

from .procs import kill_left, wait_until, with_marker

SESSION = r"""
import os, sys, threading, time
from pathlib import Path
backend, ws = sys.argv[1:3]
fg, bg = os.environ["FG"], os.environ["BG"]  # not in our argv: only the commands carry them
if backend == "none":
    from cerveau_tui.sandbox.none import NoSandbox as R
elif backend == "landlock":
    from cerveau_tui.sandbox.landlock import LandlockRunner as R
else:
    from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner as R
from cerveau_tui.sandbox.command import CommandSpec
runner = R()
# The background one is left behind by a command that returned; the foreground one is running.
runner.run(CommandSpec(f"sleep {bg} >/dev/null 2>&1 &", Path(ws), timeout=60))
threading.Thread(target=runner.run, args=(CommandSpec(f"sleep {fg}", Path(ws), timeout=600),)).start()
time.sleep(600)
"""

BACKENDS = [
    pytest.param("none"),
    pytest.param(
        "landlock",
        marks=pytest.mark.skipif(landlock_abi() < 1, reason="Landlock is not available"),
    ),
    pytest.param(
        "bubblewrap",
        marks=pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed"),
    ),
]


def _marker() -> str:
    # `sleep` takes a fraction: a unique duration is a marker in argv that nothing else carries.
    return f"900.{uuid.uuid4().int % 10**12:012d}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill_9_of_the_session_leaves_no_command_running(backend: str, tmp_path: Path) -> None:
    fg, bg = _marker(), _marker()
    session = subprocess.Popen(
        [sys.executable, "-c", SESSION, backend, str(tmp_path)],
        cwd=Path(__file__).parents[2],
        env={**os.environ, "FG": fg, "BG": bg},
        start_new_session=True,  # our own group kill below must not be what kills the commands
    )
    try:
        # Under bubblewrap the background one already died with its command (the PID
        # namespace ends with it), and under Landlock too (its process group and cgroup are
        # killed when the command ends): only the running one is there to outlive us.
        started = [fg] if backend in ("bubblewrap", "landlock") else [fg, bg]
        assert wait_until(lambda: all(with_marker(m) for m in started)), "never started"
        os.kill(session.pid, signal.SIGKILL)
        session.wait()
        assert wait_until(lambda: not with_marker(fg) and not with_marker(bg), 10.0), (
            f"left running after kill -9: {with_marker(fg) + with_marker(bg)}"
        )
    finally:
        session.kill()
        kill_left(fg)
        kill_left(bg)
