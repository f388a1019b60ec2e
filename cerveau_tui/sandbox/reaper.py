"""What makes a command die with the session when nothing is left to kill it (kill -9, a crash).

Two mechanisms, because each misses what the other catches:

- the parent-death signal (die_exec.py, landlock_exec.py): the exec'd helper before the shell
  asks the kernel for SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG). It covers the
  instant between fork and registration. The kernel clears it on fork, so a shell's own
  children (`sleep 60 &`) do not inherit it.
- the reaper: one small process per session process, holding the read end of a pipe whose only
  write end is ours. Every command's process group is registered ("+pgid"), and dropped once
  it is gone ("-pgid"); when the pipe closes (we exited, however) the reaper kills every group
  still registered and exits. A dead process cannot clean up after itself; its pipe still closes.

Bubblewrap does not need either (its PID namespace dies with it, --die-with-parent), but the
commands it runs are registered all the same: the same path for every backend.

Known gap: a process that leaves its group (`setsid`) is not reached by a group kill; under
Landlock its cgroup still holds it until kill_background, under no sandbox nothing does.
"""

from __future__ import annotations

import sys
import threading

from .. import host_process

#: The reaper's whole program (stdlib only, run with -I -S so nothing in the workspace is
#: imported). It reads "+N START" / "-N" lines until end of file, then kills the groups it holds.
#: START is the leader's start time (/proc/N/stat field 22, counted after the last ')': the
#: program name may hold one), "-" when it was already gone: a group whose leader has exited
#: lives on under its number, which the kernel does not reuse while the group exists; once the
#: number leads another process, killing "the group N" would kill a stranger's.
REAPER_SCRIPT = r"""
import os, signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def start(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return b"-"
    return b"-" if fields[0] == b"Z" else fields[19]
groups, buf = {}, b""
while True:
    try:
        chunk = os.read(0, 4096)
    except InterruptedError:
        continue
    if not chunk:
        break
    *lines, buf = (buf + chunk).split(b"\n")
    for line in lines:
        parts = line[1:].split()
        try:
            pg = int(parts[0])
        except (ValueError, IndexError):
            continue
        if pg > 1 and line[:1] == b"+":
            groups[pg] = parts[1] if len(parts) > 1 else start(pg)
        elif line[:1] == b"-":
            groups.pop(pg, None)
for pg, started in groups.items():
    # The leader's pid names another process now: the group ended and the number was reused.
    if start(pg) not in (b"-", started):
        continue
    try:
        os.killpg(pg, signal.SIGKILL)
    except OSError:
        pass
"""


def leader_start(pid: int) -> str:
    """The start time the reaper checks before its kill; "-" when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return "-"
    return "-" if fields[0] == b"Z" else fields[19].decode("ascii", "replace")


class Reaper:
    """The session process's one reaper, started at the first command."""

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python
        self._lock = threading.Lock()
        self._proc: host_process.Popen[bytes] | None = None
        self._groups: dict[int, str] = {}  # pgid -> its leader's start time ("-": gone)

    def track(self, pgid: int) -> None:
        with self._lock:
            self._groups[pgid] = leader_start(pgid)
            self._send(f"+{pgid} {self._groups[pgid]}\n")

    def untrack(self, pgid: int) -> None:
        with self._lock:
            if pgid in self._groups:
                del self._groups[pgid]
                self._send(f"-{pgid}\n")

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _send(self, line: str) -> None:
        if self._proc is None or self._proc.poll() is not None:
            # Not started, or it died (killed by hand): a new one is told every group still held.
            if not self._start():
                return
            line = "".join(f"+{g} {t}\n" for g, t in sorted(self._groups.items()))
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(line.encode())
            proc.stdin.flush()
        except OSError:
            pass  # the next call starts a new one

    def _start(self) -> bool:
        try:
            self._proc = host_process.spawn(
                [self.python, "-I", "-S", "-c", REAPER_SCRIPT],
                stdin=host_process.PIPE,
                start_new_session=True,  # a Ctrl+C or a closed terminal must not end it first
            )
        except OSError:
            self._proc = None
            return False
        return True


_REAPER = Reaper()


def track(pgid: int) -> None:
    _REAPER.track(pgid)


def untrack(pgid: int) -> None:
    _REAPER.untrack(pgid)
