"""Exec'd before a command that no boundary holds (no sandbox): die with the session.

    python -I -S die_exec.py PARENT_PID -- /bin/sh -c CMD

Asks the kernel for SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG, kept across execve),
then checks the parent is still the one that started us: had it died before the request took
effect, no signal would ever come, so we exit instead of running an orphan. Exec'd, never a
preexec_fn (unsafe in a threaded parent); stdlib + ctypes only, run with -I -S (~7 ms).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
ORPHANED = 137  # what a SIGKILL'd command would have returned: the session is gone


def die_with_parent(parent_pid: int) -> None:
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
    if prctl is None:
        return  # not Linux: nothing to ask for (the reaper still holds the group)
    if prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent_pid:
        os._exit(ORPHANED)


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        sys.stderr.write("usage: die_exec.py PARENT_PID -- COMMAND...\n")
        os._exit(126)
    try:
        die_with_parent(int(argv[0]))
    except OSError as exc:
        sys.stderr.write(f"cerveau: could not tie the command to the session: {exc}\n")
        os._exit(126)
    os.execv(argv[2], argv[2:])


if __name__ == "__main__":
    main(sys.argv[1:])
