"""Host-side looks at what a session left running: processes found in /proc by a marker argument."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path


def with_marker(marker: str) -> list[int]:
    """Pids of live (not zombie) processes with `marker` in their command line."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(marker.encode() in a for a in argv):
            found.append(int(d.name))
    return found


def wait_until(cond: Callable[[], bool], limit_s: float = 20.0) -> bool:
    """Poll a state, bounded: a fact about the end state, not a timing assertion."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def kill_left(marker: str) -> None:
    """Clean up after a failed test so it does not leave the machine busy."""
    for pid in with_marker(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
