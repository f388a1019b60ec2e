"""Landlock + seccomp: the fallback where user namespaces are unavailable (bubblewrap cannot run).

Weaker than bubblewrap, and the runner says how in `gaps` (shown in the UI and `cerveau doctor`):
Landlock rules only add access, so a path inside the writable workspace cannot be made read-only
again (no read-only `.git` or `.cerveau`); there is no PID namespace, so a background process can
outlive its command; there is no private /tmp (each command gets its own temp dir instead). What
it does hold: writes only in the workspace, the deny-read list (read is granted around each
denied path, see landlock_exec.read_everything_but), TCP, and the process cap (the same pids
cgroup as bubblewrap).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from .base import CommandResult, EnforcingRunner, Grant
from .limits import CommandGroup
from .process import kill_group, minimal_env, run_process
from .protect import maskable, runtime_dirs
from .seccomp_filter import bpf_fd

HELPER = Path(__file__).with_name("landlock_exec.py")


def landlock_abi() -> int:
    from .landlock_exec import abi_version

    return abi_version()


def landlock_gaps(abi: int) -> list[str]:
    gaps = [
        "commands can modify .cerveau/ and .git/ under Landlock (rules only add access: no "
        "read-only folder inside the writable workspace): the harness must treat both as hostile",
        "no PID namespace: background processes can outlive the command (not the session: their "
        "process group is killed when it ends, kill -9 included; one that leaves its group with "
        "setsid is killed through its cgroup at a clean close only)",
        "no /tmp size limit: each command's temp folder is on the host's /tmp",
        "no memory limit",
        "deny-read: a denied folder's file names stay listable (contents do not); paths inside "
        "the workspace cannot be masked",
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
        self,
        env_allow: tuple[str, ...] | list[str] = (),
        python: str | None = None,
        *,
        deny_read: Sequence[Path] | None = None,
        tmp_mb: int = 512,
        max_procs: int = 512,
    ) -> None:
        self.abi = landlock_abi()
        if self.abi < 1:
            raise OSError("Landlock is not available in this kernel")
        super().__init__(env_allow, deny_read=deny_read, tmp_mb=tmp_mb, max_procs=max_procs)
        self.python = python or sys.executable
        self.gaps: list[str] = landlock_gaps(self.abi)
        if self.cap.gap:
            self.gaps.append(self.cap.gap)
        self.notes: list[str] = [f"Landlock ABI {self.abi}"]
        self._groups: list[int] = []
        self._cgroups: list[CommandGroup] = []
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
        a += ["--parent-pid", str(os.getpid())]  # it dies with us (PR_SET_PDEATHSIG)
        if seccomp_fd is not None:
            a += ["--seccomp-fd", str(seccomp_fd)]
        for p in (*grant.extra_writable, tmp):
            a += ["--writable", str(p)]
        for p in maskable(self.deny_read, workspace, keep=runtime_dirs()):
            a += ["--deny", str(p)]
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
        try:
            group = self.cap.new_group()
        except OSError as exc:  # fail closed: never run past a cap we said we hold
            msg = f"cerveau: could not create the command's process-count cgroup: {exc}"
            return CommandResult(exit_code=126, output=msg + "\n", notes=[msg])
        tmp = Path(tempfile.mkdtemp(prefix="cerveau-cmd-"))
        fd = bpf_fd()
        try:
            cmd_env = minimal_env(ws, self.env_allow, env)
            cmd_env["TMPDIR"] = str(tmp)
            argv = self.argv(command, workspace=ws, mode=mode, grant=grant, tmp=tmp, seccomp_fd=fd)
            result = run_process(
                [*group.wrapper, *argv],
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
        with self._lock:
            if result.background_pgid is not None:
                self._groups.append(result.background_pgid)
            # Still holding processes (a `setsid` one escapes the process group, not the
            # cgroup): kept, so kill_background reaches them too. Kept ones emptied since go.
            self._cgroups = [
                g for g in [*self._cgroups, group] if not g.remove(kill=False, attempts=1)
            ]
        return result

    def kill_background(self) -> None:
        with self._lock:
            groups, self._groups = self._groups, []
            cgroups, self._cgroups = self._cgroups, []
        for pgid in groups:
            kill_group(pgid)
        for group in cgroups:
            group.remove(kill=True)
        self._plain.kill_background()
