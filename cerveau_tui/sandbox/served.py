"""A long-lived process inside the boundary, with pipes: what an MCP server is to the harness.

`EnforcingRunner.run` runs a command to its end with its stdin on /dev/null; an MCP server speaks
JSON-RPC on its stdin and stdout for as long as the session lasts. `EnforcingRunner.start` makes
one through the same steps as a command (the state folder checked, the pids cgroup, the seccomp
filter, the proxy's session for a network grant, the backend's launch: the workspace view, no
home, no network unless granted), and hands back this object, which owns all of it until
`close`.

What keeps it the harness's child and no longer: the process group is registered with the
session's reaper (a kill -9 of the harness kills it), bubblewrap runs it with --die-with-parent
in its own PID namespace, and `close` kills the group, removes the cgroup (a process that left
the group with setsid is in it still), ends the proxy's session and the launch's temp folders.

Start it from a thread that lives as long as the server should: bubblewrap's --die-with-parent
is the kernel's parent-death signal, which fires when the THREAD that forked the launcher exits,
not the process (a server started from a short-lived thread was killed the moment it ended).

Its stderr is read by a thread into a bounded tail: a server that floods its log cannot fill the
pipe and stall (a full stderr pipe blocks the server's next write), nor the harness's memory.
"""

from __future__ import annotations

import os
import threading
from contextlib import ExitStack
from typing import IO

from .. import host_process
from . import reaper
from .process import kill_group

#: The last bytes of a server's stderr kept for the person (doctor, an error): its log's tail.
STDERR_TAIL = 8 * 1024


class Served:
    """A running server: `stdin` and `stdout` are its JSON-RPC pipes (binary)."""

    def __init__(self, proc: host_process.Popen[bytes], cleanup: ExitStack) -> None:
        self.proc = proc
        self.pid = proc.pid
        self._cleanup = cleanup
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._closing = threading.Lock()
        self.closed = False
        self._stderr = threading.Thread(
            target=self._drain, args=(proc.stderr,), name="cerveau-served-stderr", daemon=True
        )
        self._stderr.start()

    @property
    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    @property
    def stdout(self) -> IO[bytes]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def _drain(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        while True:
            try:
                chunk = os.read(stream.fileno(), 65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            with self._lock:
                self._tail += chunk
                if len(self._tail) > 2 * STDERR_TAIL:
                    del self._tail[: len(self._tail) - STDERR_TAIL]

    def stderr_tail(self) -> str:
        with self._lock:
            return bytes(self._tail[-STDERR_TAIL:]).decode("utf-8", "replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Kill it and everything it started, and let go of its boundary. Idempotent, and a
        second caller returns only once the first is done (the reader that saw a flood and the
        hub both close it: "closed" must mean gone for both)."""
        with self._closing:
            if self.closed:
                return
            kill_group(self.pid)
            try:
                self.proc.wait(timeout=5)
            except host_process.TimeoutExpired:
                pass
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
            self._cleanup.close()
            self.closed = True


def spawn_served(
    argv: list[str], *, cwd: str, env: dict[str, str], pass_fds: tuple[int, ...]
) -> host_process.Popen[bytes]:
    """The launcher with three pipes, in a new session (no terminal, its own group), registered
    with the reaper before anything else can happen to us."""
    pipe = host_process.PIPE
    proc = host_process.spawn(
        argv, cwd=cwd, env=env, pass_fds=pass_fds, start_new_session=True, bufsize=0,
        stdin=pipe, stdout=pipe, stderr=pipe,
    )  # fmt: skip
    reaper.track(proc.pid)
    return proc
