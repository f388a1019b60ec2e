"""Landlock + seccomp: the fallback where user namespaces are unavailable (bubblewrap cannot run).

Weaker than bubblewrap, and the runner says how in `gaps` (shown in the UI and `cerveau doctor`):
Landlock rules only add access, so a path inside the writable workspace cannot be made read-only
again (no read-only `.git` or `.cerveau`); there is no PID namespace, so a background process can
outlive its command; there is no private /tmp (each command gets its own temp dir instead). What
it does hold: writes only in the workspace, the deny-read list (read is granted around each
denied path, see landlock_exec.read_everything_but), the network, and the process cap (the same
pids cgroup as bubblewrap).

The network: without a grant, no IPv4/IPv6 socket at all (seccomp). With one, the harness's proxy
(netproxy.py) listens on a fresh loopback port for that command alone, Landlock lets the command
connect by TCP to that port and nowhere else (no bind), and a second seccomp filter refuses every
inet socket that is not TCP (inet_stream.py: a UDP datagram left the machine under a grant). The
proxy connects only to the granted hosts; a program that ignores the proxy variables fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from .base import CommandResult, EnforcingRunner, Grant
from .grantable import grant_refusal
from .inet_stream import stream_only_fd
from .limits import CommandGroup
from .netproxy import NO_PROXY_KEYS, NetProxy, proxy_env, tell_refusals
from .process import kill_group, minimal_env, run_process
from .protect import maskable, runtime_dirs
from .seccomp_filter import bpf_fd
from .view import MachineView, machine_view

#: Read under Landlock besides the machine view: the kernel's files and the devices.
LANDLOCK_READ = (Path("/dev"), Path("/proc"), Path("/sys"))
#: ...but not the host's POSIX IPC, which is files there: no IPC namespace under Landlock, and a
#: command read another process's /dev/shm segment through the /dev rule (issue 32, part 6).
LANDLOCK_NO_READ = (Path("/dev/shm"), Path("/dev/mqueue"))

HELPER = Path(__file__).with_name("landlock_exec.py")


def landlock_abi() -> int:
    from .landlock_exec import abi_version

    return abi_version()


def landlock_gaps(abi: int) -> list[str]:
    gaps = [
        "commands can modify .cerveau/ and .git/ under Landlock (rules only add access: no "
        "read-only folder inside the writable workspace): the harness must treat both as hostile",
        "no PID namespace: a background process is killed when its command ends (its process "
        "group and its cgroup); without a pids cgroup, one that leaves its group with setsid "
        "survives until the session ends",
        "an editable checkout of cerveau inside the workspace stays writable to commands "
        "(Landlock cannot make a folder inside the workspace read-only)",
        "other processes' command lines are readable in /proc (no PID namespace)",
        "no /tmp size limit: each command's temp folder is on the host's /tmp",
        "no memory limit",
        "deny-read inside an allowed folder: a denied folder's file names stay listable "
        "(contents do not); paths inside the workspace cannot be masked",
    ]
    if abi < 4:
        gaps.append(
            "a network grant opens every TCP destination, not only the proxy (Landlock ABI < 4 "
            "has no network rules; without a grant the seccomp filter still refuses all of it)"
        )
    else:
        gaps.append(
            "with a network grant, a command may also open TCP to the proxy's port on another "
            "address (Landlock's network rules name ports, not addresses)"
        )

    if abi < 6:
        gaps.append(
            "signals not scoped (Landlock ABI < 6): a command can signal the person's other "
            "processes (abstract unix sockets stay refused by the seccomp filter)"
        )
    # No IPC namespace: System V IPC and POSIX message queues are refused by the seccomp filter,
    # /dev/shm's contents by a Landlock rule; what is left is a name.
    gaps.append("the names of the host's POSIX shared-memory objects (/dev/shm) are listable")
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
        read_allow: Sequence[Path] = (),
        proxy: NetProxy | None = None,
    ) -> None:
        self.abi = landlock_abi()
        self.proxy = proxy or NetProxy()
        self.read_allow = tuple(read_allow)
        self._view: MachineView | None = None
        if self.abi < 1:
            raise OSError("Landlock is not available in this kernel")
        super().__init__(env_allow, deny_read=deny_read, tmp_mb=tmp_mb, max_procs=max_procs)
        self.python = python or sys.executable
        self.gaps: list[str] = landlock_gaps(self.abi)
        if self.cap.gap:
            self.gaps.append(self.cap.gap)
        self.notes: list[str] = [
            f"Landlock ABI {self.abi}",
            "a network grant goes through the harness's proxy: only the granted hosts, names "
            "resolved by the proxy, TCP only; a program that ignores HTTP(S)_PROXY/ALL_PROXY has "
            "no network",
        ]
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
        proxy_port: int | None = None,
        stream_fd: int | None = None,
    ) -> list[str]:
        """`proxy_port`, `stream_fd`: with a network grant, the proxy's loopback port (the one
        TCP destination) and the TCP-only filter (inet_stream.py)."""
        grant = grant or Grant()
        # -I -S: isolated, no site: the helper is stdlib-only and starts on every command.
        a = [self.python, "-I", "-S", str(HELPER), "--workspace", str(workspace), "--mode", mode]
        a += ["--parent-pid", str(os.getpid())]  # it dies with us (PR_SET_PDEATHSIG)
        for f in (seccomp_fd, stream_fd):
            if f is not None:
                a += ["--seccomp-fd", str(f)]
        # Never writable, whatever was granted: a kernel interface, the harness's own files.
        granted = [p for p in grant.extra_writable if grant_refusal(Path(p)) is None]
        for p in (*granted, tmp):
            a += ["--writable", str(p)]
        for p in maskable(self.deny_read, workspace, keep=runtime_dirs()):
            a += ["--deny", str(p)]
        a += [x for p in LANDLOCK_NO_READ if p.exists() for x in ("--deny", str(p))]
        # Reads by allow list: the same machine view bubblewrap shows (view.py), plus the
        # kernel's own files and the command's temp folder.
        for p in [*self.view().readable_roots(), *LANDLOCK_READ, tmp]:
            a += ["--read", str(p)]
        if grant.network and proxy_port is not None:
            a += ["--tcp-connect", str(proxy_port)]
        return [*a, "--", "/bin/sh", "-c", command]

    def view(self) -> MachineView:
        if self._view is None:
            self._view = machine_view(self.read_allow)
        return self._view

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
        granted = grant is not None and grant.network
        # No network namespace here: without a grant, no IPv4/IPv6 socket at all (Landlock
        # restricts only TCP; UDP, SCTP and MPTCP would leave); with one, TCP only.
        fd = bpf_fd(inet=granted)
        fds = [fd]
        session = None
        port: int | None = None
        if granted:
            assert grant is not None
            fds.append(stream_only_fd())
            # A listener per command: its port is the one Landlock lets this command reach, and
            # what the proxy refuses is this command's to be told.
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            listener.listen(128)
            port = listener.getsockname()[1]
            session = self.proxy.session(grant.hosts).serve(listener=listener)
        try:
            cmd_env = minimal_env(ws, self.env_allow, env)
            if port is not None:
                for key in NO_PROXY_KEYS:
                    cmd_env.pop(key, None)
                cmd_env.update(proxy_env(port))
            cmd_env["TMPDIR"] = str(tmp)
            home = tmp / "home"  # an empty private home, gone with the command
            home.mkdir()
            cmd_env["HOME"] = str(home)
            for key, value in self.view().env:
                cmd_env.setdefault(key, value)
            argv = self.argv(
                command, workspace=ws, mode=mode, grant=grant, tmp=tmp, seccomp_fd=fd,
                proxy_port=port, stream_fd=fds[1] if granted else None,
            )  # fmt: skip
            result = run_process(
                [*group.wrapper, *argv],
                cwd=ws,
                env=cmd_env,
                timeout=timeout,
                output_cap=output_cap,
                cancel=cancel,
                pass_fds=tuple(fds),
            )
        finally:
            for f in fds:
                os.close(f)
            shutil.rmtree(tmp, ignore_errors=True)
            refused = session.close() if session is not None else []
        # Nothing outlives its command, as under bubblewrap's PID namespace: a process left running
        # changed git settings after the guard's after-check, and the next command's "before"
        # already held the change. The process group first, then the cgroup (a `setsid` process
        # leaves the group, not the cgroup).
        if result.background_pgid is not None:
            kill_group(result.background_pgid)
        if not group.remove(kill=True):
            with self._lock:
                self._cgroups.append(group)
        tell_refusals(result, refused)
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
        self.proxy.close()
