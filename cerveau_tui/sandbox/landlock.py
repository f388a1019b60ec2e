"""Landlock + seccomp: the fallback where user namespaces are unavailable (bubblewrap cannot run).

Weaker than bubblewrap, and the runner says how in `gaps` (shown in the UI and `cerveau doctor`):
Landlock rules only add access, so a path inside the writable workspace cannot be made read-only
again (no read-only `.git`); there is no PID namespace, so a background process can outlive its
command; there is no private /tmp (each command gets its own temp dir instead).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from .base import CommandResult, Grant
from .none import EnforcingRunner, _killpg, minimal_env, run_process
from .seccomp_filter import bpf_fd

HELPER = Path(__file__).with_name("landlock_exec.py")


def landlock_abi() -> int:
    from .landlock_exec import abi_version

    return abi_version()


def landlock_gaps(abi: int) -> list[str]:
    gaps = [
        "no read-only .git inside the workspace: .git/hooks and .git/config are writable by commands",
        "no PID namespace: background processes can outlive the command",
        "no process-count or memory limit: a fork bomb is stopped only by the timeout",
    ]
    if abi < 4:
        gaps.append("network not restricted (Landlock ABI < 4)")
    elif abi < 10:
        gaps.append("only TCP is restricted: UDP is not (Landlock ABI < 10)")
    if abi < 6:
        gaps.append("signals and abstract sockets not scoped (Landlock ABI < 6)")
    return gaps


class LandlockRunner(EnforcingRunner):
    backend = "landlock"
    enforced = True

    def __init__(
        self, env_allow: tuple[str, ...] | list[str] = (), python: str | None = None
    ) -> None:
        self.abi = landlock_abi()
        if self.abi < 1:
            raise OSError("Landlock is not available in this kernel")
        super().__init__(env_allow)
        self.python = python or sys.executable
        self.gaps: list[str] = landlock_gaps(self.abi)
        self.notes: list[str] = [f"Landlock ABI {self.abi}"]
        self._groups: list[int] = []
        self._lock = threading.Lock()

    def argv(
        self,
        command: str,
        *,
        workspace: Path,
        mode: str,
        grant: Grant | None,
        tmp: Path,
        seccomp_fd: int | None = None,
    ) -> list[str]:
        grant = grant or Grant()
        # -I -S: isolated, no site: the helper is stdlib-only and starts on every command.
        a = [self.python, "-I", "-S", str(HELPER), "--workspace", str(workspace), "--mode", mode]
        if seccomp_fd is not None:
            a += ["--seccomp-fd", str(seccomp_fd)]
        for p in (*grant.extra_writable, tmp):
            a += ["--writable", str(p)]
        if grant.network:
            a.append("--network")
        return [*a, "--", "/bin/sh", "-c", command]

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
        tmp = Path(tempfile.mkdtemp(prefix="cerveau-cmd-"))
        fd = bpf_fd()
        try:
            cmd_env = minimal_env(ws, self.env_allow, env)
            cmd_env["TMPDIR"] = str(tmp)
            result = run_process(
                self.argv(command, workspace=ws, mode=mode, grant=grant, tmp=tmp, seccomp_fd=fd),
                cwd=ws,
                env=cmd_env,
                timeout=timeout,
                output_cap=output_cap,
                cancel=cancel,
                pass_fds=(fd,),
            )
        finally:
            os.close(fd)
            shutil.rmtree(tmp, ignore_errors=True)
        if result.background_pgid is not None:
            with self._lock:
                self._groups.append(result.background_pgid)
        return result

    def kill_background(self) -> None:
        with self._lock:
            groups, self._groups = self._groups, []
        for pgid in groups:
            _killpg(pgid)
        self._plain.kill_background()
