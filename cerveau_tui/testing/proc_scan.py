"""Host-side evidence that a process is gone: the pids whose argv is `sleep <token>`, read from
/proc (inside a sandbox or not, the host sees them). Tests and benchmarks of "stop means stop"
(issue 33) give the command they stop a duration no other process sleeps for, and look it up here
rather than trusting what the tool printed."""

from __future__ import annotations

import os
from pathlib import Path


def sleeping(token: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 2 and argv[0].endswith(b"sleep") and argv[1] == token.encode():
            found.append(int(pid))
    return found
