"""No enforcement: commands run as plain processes in their own process group.

Used when neither bubblewrap nor Landlock can be enforced. The policy layer must then treat every
command in read-only and workspace-write modes as a crossing; this runner only provides the
hygiene (own session, minimal environment, no inherited descriptors, a group killed on timeout).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from .base import CommandResult, Grant

SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "USER", "LOGNAME")


def minimal_env(workspace: Path, allow: tuple[str, ...] = (), extra: dict[str, str] | None = None) -> dict[str, str]:
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


def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    output_cap: int,
    cancel: threading.Event | None,
    pass_fds: tuple[int, ...] = (),
) -> CommandResult:
    """Run argv in a new session with output to a temp file (so a process left in the background
    holding stdout cannot hang us), kill the group on timeout or cancel."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
        )
        timed_out = interrupted = False
        deadline = started + timeout
        while True:
            try:
                proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            if cancel is not None and cancel.is_set():
                interrupted = True
            elif time.monotonic() > deadline:
                timed_out = True
            if timed_out or interrupted:
                _killpg(proc.pid)
                proc.wait()
                break
        background = None
        if not (timed_out or interrupted) and _group_alive(proc.pid):
            background = proc.pid
        out.seek(0)
        raw = out.read(output_cap * 4 + 1)
    text = raw.decode("utf-8", errors="replace")
    text, truncated = cap_output(text, output_cap)
    return CommandResult(
        exit_code=None if (timed_out or interrupted) else proc.returncode,
        output=text,
        timed_out=timed_out,
        interrupted=interrupted,
        truncated=truncated or len(raw) > output_cap * 4,
        duration_ms=(time.monotonic() - started) * 1000,
        background_pgid=background,
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
