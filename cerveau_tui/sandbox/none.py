"""No enforcement: commands run as plain processes in their own process group.

Used when neither bubblewrap nor Landlock can be enforced. The policy layer must then treat every
command in read-only and workspace-write modes as a crossing; this runner only provides the
hygiene (own session, minimal environment, no inherited descriptors, a group killed on timeout).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from .base import CommandResult, Grant
from .limits import ProcessCap
from .protect import StateDirRefused, default_denied, ensure_state_dir

SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "USER", "LOGNAME")


def minimal_env(
    workspace: Path, allow: tuple[str, ...] = (), extra: dict[str, str] | None = None
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
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}", True


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

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
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
        return f"{head}\n[... about {cut} bytes cut ...]\n{tail}", True


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
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=w,
            stderr=w,
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
        )
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
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
                except subprocess.TimeoutExpired:
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
                    f"output flood: killed after {sink.total // (1024 * 1024)} MiB of output"
                )
            if timed_out or interrupted or flooded:
                _killpg(proc.pid)
                proc.wait()
                if not eof:
                    _drain(r, sink)
                break
    finally:
        os.close(r)
    background = None
    if not (timed_out or interrupted or flooded) and _group_alive(proc.pid):
        background = proc.pid
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


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


class NoSandbox:
    backend = "none"
    enforced = False
    gaps: list[str] = [
        "commands run with your full rights: the policy asks before every command in read-only "
        "and workspace-write modes",
        "no deny-read masking: a command can read every secret you can",
        "no read-only .cerveau/ or .git/: a command can rewrite the harness's state and git hooks",
        "background processes can outlive the command",
        "no process-count limit and no /tmp size limit",
    ]
    notes: list[str] = []

    def __init__(self, env_allow: tuple[str, ...] = ()) -> None:
        self.env_allow = env_allow
        self._groups: list[int] = []
        self._lock = threading.Lock()

    def run(
        self,
        command: str,
        *,
        workspace: Path,
        mode: str = "workspace-write",
        timeout: float = 120.0,
        output_cap: int = 30_000,
        grant: Grant | None = None,
        cancel: threading.Event | None = None,
        env: dict[str, str] | None = None,
    ) -> CommandResult:
        result = run_process(
            ["/bin/sh", "-c", command],
            cwd=workspace,
            env=minimal_env(workspace, self.env_allow, env),
            timeout=timeout,
            output_cap=output_cap,
            cancel=cancel,
        )
        if result.background_pgid is not None:
            with self._lock:
                self._groups.append(result.background_pgid)
        return result

    def kill_background(self) -> None:
        with self._lock:
            groups, self._groups = self._groups, []
        for pgid in groups:
            _killpg(pgid)


class EnforcingRunner:
    """What the enforcing backends share. full-access is the person's choice of no boundary: it
    runs as a plain process and the result says so. Every other mode goes to `_run_enforced`."""

    backend = "?"
    enforced = True

    def __init__(
        self,
        env_allow: tuple[str, ...] | list[str] = (),
        *,
        deny_read: Sequence[Path] | None = None,
        tmp_mb: int = 512,
        max_procs: int = 512,
    ) -> None:
        self.env_allow = tuple(env_allow)
        self._plain = NoSandbox(self.env_allow)
        # Built bare (tests, tools), a runner still masks the default secrets: secure by default.
        self.deny_read = list(default_denied() if deny_read is None else deny_read)
        self.tmp_mb = tmp_mb
        self.cap = ProcessCap(max_procs)

    def run(
        self,
        command: str,
        *,
        workspace: Path,
        mode: str = "workspace-write",
        timeout: float = 120.0,
        output_cap: int = 30_000,
        grant: Grant | None = None,
        cancel: threading.Event | None = None,
        env: dict[str, str] | None = None,
    ) -> CommandResult:
        if mode == "full-access":
            result = self._plain.run(
                command, workspace=workspace, mode=mode, timeout=timeout, output_cap=output_cap,
                grant=grant, cancel=cancel, env=env,
            )  # fmt: skip
            result.notes.append("full-access: ran without the sandbox")
            return result
        ws = Path(os.path.realpath(workspace))
        try:
            ensure_state_dir(ws)
        except (StateDirRefused, OSError) as exc:
            return CommandResult(exit_code=126, output=f"cerveau: {exc}\n", notes=[str(exc)])
        return self._run_enforced(command, ws, mode, timeout, output_cap, grant, cancel, env)

    def _run_enforced(
        self,
        command: str,
        ws: Path,
        mode: str,
        timeout: float,
        output_cap: int,
        grant: Grant | None,
        cancel: threading.Event | None,
        env: dict[str, str] | None,
    ) -> CommandResult:
        raise NotImplementedError
