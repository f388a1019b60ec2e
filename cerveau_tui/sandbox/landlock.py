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
connect by TCP to that port and nowhere else (no bind), and the seccomp filter refuses every
inet socket that is not TCP (seccomp_filter.Inet "tcp": a UDP datagram left the machine under a
grant). The proxy connects only to the granted hosts; a program that ignores the proxy variables
fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Unpack

from .base import Bounds, CommandSpec, EnforcingRunner, Grant, Launch
from .grantable import grant_refusal
from .netproxy import Session
from .protect import maskable, runtime_dirs
from .seccomp_filter import Inet

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
        **bounds: Unpack[Bounds],
    ) -> None:
        self.abi = landlock_abi()
        if self.abi < 1:
            raise OSError("Landlock is not available in this kernel")
        super().__init__(env_allow, **bounds)
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

    def inet(self, spec: CommandSpec) -> Inet:
        # No network namespace here: without a grant, no IPv4/IPv6 socket at all (Landlock
        # restricts only TCP; UDP, SCTP and MPTCP would leave); with one, TCP only.
        return "tcp" if spec.network else "none"

    def argv(
        self,
        spec: CommandSpec,
        *,
        tmp: Path,
        seccomp_fd: int | None = None,
        proxy_port: int | None = None,
    ) -> list[str]:
        """`proxy_port`: with a network grant, the proxy's loopback port (the one TCP
        destination)."""
        grant = spec.grant or Grant()
        ws = Path(os.path.realpath(spec.workspace))
        # -I -S: isolated, no site: the helper is stdlib-only and starts on every command.
        a = [self.python, "-I", "-S", str(HELPER), "--workspace", str(ws), "--mode", spec.mode]
        a += ["--parent-pid", str(os.getpid())]  # it dies with us (PR_SET_PDEATHSIG)
        if seccomp_fd is not None:
            a += ["--seccomp-fd", str(seccomp_fd)]
        # Never writable, whatever was granted: a kernel interface, the harness's own files.
        granted = [p for p in grant.extra_writable if grant_refusal(Path(p)) is None]
        for p in (*granted, tmp):
            a += ["--writable", str(p)]
        for p in maskable(self.deny_read, ws, keep=runtime_dirs()):
            a += ["--deny", str(p)]
        a += [x for p in LANDLOCK_NO_READ if p.exists() for x in ("--deny", str(p))]
        # Reads by allow list: the same machine view bubblewrap shows (view.py), plus the
        # kernel's own files and the command's temp folder.
        for p in [*self.view().readable_roots(), *LANDLOCK_READ, tmp]:
            a += ["--read", str(p)]
        if grant.network and proxy_port is not None:
            a += ["--tcp-connect", str(proxy_port)]
        return [*a, "--", "/bin/sh", "-c", spec.command]

    @contextmanager
    def _launch(
        self, spec: CommandSpec, seccomp_fd: int, session: Session | None
    ) -> Iterator[Launch]:
        tmp = Path(tempfile.mkdtemp(prefix="cerveau-cmd-"))  # no private /tmp: a folder of its own
        try:
            home = tmp / "home"  # an empty private home, gone with the command
            home.mkdir()
            port: int | None = None
            if session is not None:
                # A listener per command: its port is the one Landlock lets this command reach,
                # and what the proxy refuses is this command's to be told.
                listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                listener.bind(("127.0.0.1", 0))
                listener.listen(128)
                port = listener.getsockname()[1]
                session.serve(listener=listener)
            env = self.command_env(spec, str(home), str(tmp), port)
            yield Launch(self.argv(spec, tmp=tmp, seccomp_fd=seccomp_fd, proxy_port=port), env)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
