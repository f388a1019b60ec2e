"""The app's own llama-server dies with the app, however the app ends.

Closing the terminal (SIGHUP), SIGTERM or a crash skipped the app's `atexit` stop, and its
llama-server, in a session of its own so the terminal's Ctrl-C does not reach it, ran on holding
the model's memory. `preexec_fn` with `prctl(PR_SET_PDEATHSIG)` is unsafe in a threaded app, so
a tiny watchdog does it instead: it reads a pipe whose only writer is the app; the kernel closes
that end when the app dies, even by SIGKILL, and the watchdog then stops the server's group.

    python -m cerveau_tui.stack.watchdog PID START    # stdin: the pipe; PID: the server's
                                                      # pgid; START: its /proc start time
"""

from __future__ import annotations

import os
import signal
import sys

from cerveau_tui import host_process
from cerveau_tui.stack.state import start_time, terminate_group


def watch(server_pid: int) -> host_process.Popen[bytes]:
    """Start the watchdog for `server_pid`; returns it with the pipe's write end as its stdin (the
    app keeps it open until it stops the server itself)."""
    started = start_time(server_pid) or "0"
    # python_argv, not `python -m` from our cwd: started from the workspace, `-m` imported the
    # workspace's `signal.py` (any module not yet loaded) and ran it on the host.
    return host_process.spawn(
        host_process.python_argv("cerveau_tui.stack.watchdog", str(server_pid), started),
        stdin=host_process.PIPE, start_new_session=True,
    )  # fmt: skip


def main(argv: list[str]) -> int:
    pid, started = int(argv[0]), argv[1]
    # Its own session already; the terminal's hangup must not take the watchdog before the app.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while os.read(0, 4096):
        pass  # the app never writes; EOF is the app gone (or done with the server)
    if start_time(pid) == started:  # never signal a group that a reused pid now leads
        terminate_group(pid, started=started, alive=lambda p: start_time(p) == started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
