"""Running one command as a process: the hygiene every backend shares.

A new session with no controlling terminal, a minimal environment (no inherited secrets), no
inherited descriptors, the output read into a bounded head and tail, and the process group
killed on timeout, cancel or an output flood. The backends decide what the process may touch
(none.py: nothing enforced; bubblewrap.py, landlock.py: a boundary); this module only runs it.

A command dies with the session, however the session ends (kill -9 included), under every
backend. Bubblewrap has its PID namespace and --die-with-parent; the others have two things: the
exec'd helper before the shell asks for SIGKILL when its parent dies (die_exec.py, and the same
step in landlock_exec.py), and every group a command starts is registered here with a reaper
process (reaper.py) that kills them all the moment the session's end of its pipe closes. The
signal alone is not enough: the kernel clears it on fork, so `sleep 60 &` outlives the shell.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from .. import host_process
from ..text_cut import cut_marker
from . import reaper
from .command import CommandResult

SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "USER", "LOGNAME")


def minimal_env(
    workspace: Path, allow: tuple[str, ...] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    env = {k: os.environ[k] for k in (*SAFE_ENV_KEYS, *allow) if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["HOME"] = str(workspace)
    env["TERM"] = "dumb"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if extra:
        env.update(extra)
    return env


def cap_output(text: str, cap: int) -> tuple[str, bool]:
    if len(text) <= cap:
        return text, False
    head = cap * 2 // 3
    tail = cap - head
    cut = len(text) - cap
    lines = text.count("\n", head, len(text) - tail)
    marker = cut_marker(lines, f"{cut} characters cut")
    return f"{text[:head]}\n{marker}\n{text[-tail:]}", True


# A command that floods output (`yes`, a runaway log) is killed once it has written this much: we
# keep only a head and a tail anyway, and reading forever would spend a shared core on nothing.
FLOOD_BYTES = 64 * 1024 * 1024
_POLL_S = 0.05


class _Sink:
    """Keeps the first and last bytes of a stream, never more, whatever the command writes."""

    def __init__(self, cap_chars: int) -> None:
        self.keep = max(cap_chars, 1) * 4  # a character is at most 4 UTF-8 bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.newlines = 0  # in everything written, kept or not

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.newlines += chunk.count(b"\n")
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * self.keep:
                del self.tail[: len(self.tail) - self.keep]

    def text(self, cap: int) -> tuple[str, bool]:
        if not self.tail:
            return cap_output(self.head.decode("utf-8", errors="replace"), cap)
        head = self.head.decode("utf-8", errors="replace")[: cap * 2 // 3]
        tail = bytes(self.tail[-self.keep :]).decode("utf-8", errors="replace")[
            -(cap - cap * 2 // 3) :
        ]
        cut = self.total - len(head.encode()) - len(tail.encode())
        # A newline byte survives decoding with replacement as itself: this count is exact.
        lines = self.newlines - head.count("\n") - tail.count("\n")
        return f"{head}\n{cut_marker(lines, f'about {cut} bytes cut')}\n{tail}", True


def _drain(fd: int, sink: _Sink) -> bool:
    """Read what is available now; True at end of file."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return False
        except OSError:
            return True
        if not chunk:
            return True
        sink.add(chunk)


def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    output_cap: int,
    cancel: threading.Event | None,
    pass_fds: tuple[int, ...] = (),
    flood_bytes: int = FLOOD_BYTES,
) -> CommandResult:
    """Run argv in a new session (no controlling terminal: stdin is /dev/null, never the TUI's),
    with no inherited descriptors but `pass_fds`, and the output read through a pipe into a bounded
    head+tail buffer. The process group is killed on timeout, cancel, or an output flood.

    We stop reading when the command itself exits: a process it left in the background that still
    holds the pipe cannot hang us (its next write gets SIGPIPE, so a server the model starts must
    redirect its output to a file)."""
    started = time.monotonic()
    r, w = os.pipe()
    try:
        # cwd: the command runs in the workspace (the sandbox launcher takes it in, and a
        # full-access command runs there by the person's choice); env: built by the backend.
        proc = host_process.spawn(
            argv,
            cwd=cwd,
            env=env,
            stdout=w,
            stderr=w,
            start_new_session=True,
            pass_fds=pass_fds,
        )
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    reaper.track(proc.pid)  # its own session: the group id is its pid
    os.set_blocking(r, False)
    sink = _Sink(output_cap)
    notes: list[str] = []
    timed_out = interrupted = flooded = False
    deadline = started + timeout
    eof = False
    try:
        while True:
            if eof:
                try:
                    proc.wait(timeout=_POLL_S)
                except host_process.TimeoutExpired:
                    pass
            else:
                ready, _, _ = select.select([r], [], [], _POLL_S)
                if ready:
                    eof = _drain(r, sink)
            if proc.poll() is not None:
                if not eof:
                    _drain(r, sink)
                break
            if cancel is not None and cancel.is_set():
                interrupted = True
            elif time.monotonic() > deadline:
                timed_out = True
            elif sink.total > flood_bytes:
                flooded = True
                notes.append(
                    f"killed: output flood, {sink.total / 2**20:.1f} MiB written (the cap is "
                    f"{flood_bytes / 2**20:.1f} MiB); the output kept is its head and tail"
                )
            if timed_out or interrupted or flooded:
                kill_group(proc.pid)
                proc.wait()
                if not eof:
                    _drain(r, sink)
                break
    finally:
        os.close(r)
    background = None
    if not (timed_out or interrupted or flooded) and group_alive(proc.pid):
        background = proc.pid
    else:
        reaper.untrack(proc.pid)
    text, truncated = sink.text(output_cap)
    killed = timed_out or interrupted or flooded
    return CommandResult(
        exit_code=None if killed else proc.returncode,
        output=text,
        timed_out=timed_out,
        interrupted=interrupted,
        truncated=truncated or flooded,
        duration_ms=(time.monotonic() - started) * 1000,
        background_pgid=background,
        notes=notes,
    )


def kill_group(pgid: int, started: str | None = None) -> None:
    """SIGKILL the group. `started`: its leader's start time when the group was registered
    (reaper.leader_start); a leader now alive with another start time means the number was
    handed to someone else's process (a pgid is not reused while its group lives), so nothing
    is killed. Checked at the moment of the kill, as the reaper does."""
    if started is not None and reaper.leader_start(pgid) not in ("-", started):
        reaper.untrack(pgid)
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    reaper.untrack(pgid)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False
