"""bubblewrap: the enforcing backend. A fresh user, PID, IPC, UTS, cgroup and network namespace;
/ read-only; the workspace the only writable place; a seccomp filter on top.

The network namespace is never shared, granted or not: a grant gave the command the host's whole
namespace (every host, the host's loopback services), so a grant "to github.com" was only as good
as a parser of curl's options. A granted command now starts behind a bridge (netbridge.py) that
hands the harness a listener inside the command's namespace; the proxy serving it (netproxy.py)
connects only to the granted hosts, and a program that ignores the proxy variables has no route.

Hardened for root on purpose: run as root, a bare bwrap contains nothing (the command could
`mount -o remount,rw /`), so the user namespace and `--cap-drop ALL` are not optional. The argv is
a list handed to execve, never a shell string, and bwrap is looked up at absolute system paths only,
so a `bwrap` planted in the workspace (or on a PATH the model controls) is never the one that runs.

Background processes: with `--unshare-pid` bwrap is init of the command's PID namespace, so when the
command exits every process it started dies with it. A server the model starts with `&` therefore
cannot outlive its command; a command that needs a server must start it, use it and stop it in one
invocation (`./serve & sleep 1; curl ...; kill %1`). That is the price of "nothing escapes".

Besides writes: the deny-read list is masked (found by probing: with / read-only, `~/.ssh`,
`~/.npmrc` and /etc/shadow all reached the model), `.cerveau/` and `.git` are read-only (see
protect.py), /tmp and /dev/shm are capped tmpfs (each was as large as half the machine), and each
command runs in its own pids cgroup (see limits.py; a fork bomb was stopped only by the timeout).
"""

from __future__ import annotations

import os
import socket
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Unpack

from .base import Bounds, CommandSpec, EnforcingRunner, Grant, Launch
from .grantable import grant_refusal
from .netproxy import Session
from .protect import STATE_DIR, maskable, runtime_dirs
from .seccomp_filter import Inet
from .view import bwrap_args, view_home_args

BWRAP_PATHS = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")
SANDBOX_HOME = "/tmp/home"  # on the sandbox's private /tmp: caches written to ~ vanish with it
# `.cerveau` whole (see protect.py); its config.toml again so that a grant of `.cerveau` itself
# does not open the config with it.
PROTECTED_REL = (".git/hooks", ".git/config", STATE_DIR, f"{STATE_DIR}/config.toml")
#: The proxy's port inside a granted command's own network namespace (nothing else is bound
#: there when the command starts), and the bridge that opens it.
PROXY_PORT = 3128
BRIDGE = Path(__file__).with_name("netbridge.py")


def find_bwrap(exclude_under: Path | None = None) -> str | None:
    for candidate in BWRAP_PATHS:
        real = os.path.realpath(candidate)
        if exclude_under is not None and _is_under(
            Path(real), Path(os.path.realpath(exclude_under))
        ):
            continue
        if os.path.isfile(real) and os.access(real, os.X_OK):
            return candidate
    return None


def _is_under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class BubblewrapRunner(EnforcingRunner):
    backend = "bubblewrap"
    enforced = True
    notes: list[str] = [
        "background processes die when their command exits (PID namespace)",
        "/tmp and /dev/shm are private to each command and size-capped",
        "deny-read paths are masked; .cerveau/ and .git/ are read-only",
        "a network grant goes through the harness's proxy: only the granted hosts, names resolved "
        "by the proxy; a program that ignores HTTP(S)_PROXY/ALL_PROXY has no network",
        "full-access mode runs commands without the sandbox (nothing crosses, by definition)",
    ]

    def __init__(
        self,
        bwrap: str | None = None,
        env_allow: tuple[str, ...] | list[str] = (),
        **bounds: Unpack[Bounds],
    ) -> None:
        found = bwrap or find_bwrap()
        if found is None:
            raise FileNotFoundError("bwrap not found in " + ", ".join(BWRAP_PATHS))
        self.bwrap = found
        super().__init__(env_allow, **bounds)
        self.gaps: list[str] = [
            "no memory limit beyond the /tmp and /dev/shm caps",
            "deny-read paths inside the workspace (or holding it) cannot be masked",
        ]
        if self.cap.gap:
            self.gaps.append(self.cap.gap)
        if os.getuid() == 0:
            self.notes = [
                *self.notes,
                "run as root: a command's uid is the host's 0 with no capability in any namespace; "
                "/proc and /sys are read-only, so no kernel setting is its to change",
            ]

    def inet(self, spec: CommandSpec) -> Inet:
        return "any"  # the command's own network namespace decides (module docstring)

    def argv(
        self,
        spec: CommandSpec,
        *,
        seccomp_fd: int | None = None,
        file_fds: list[int] | None = None,
        bridge_fd: int | None = None,
    ) -> list[str]:
        """`file_fds`: where the descriptors of the /etc files copied in are put (the caller
        passes them to bwrap and closes them); None, when the argv is only shown, binds them.
        `bridge_fd`: with a network grant, the socket the bridge hands its listener over."""
        ws = Path(os.path.realpath(spec.workspace))
        grant = spec.grant or Grant()
        a = [
            self.bwrap,
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--unshare-net",  # granted or not: a grant is served by the proxy (module docstring)
            "--disable-userns",
            "--cap-drop",
            "ALL",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
        ]
        port = PROXY_PORT if grant.network else None
        cmd_env = self.command_env(replace(spec, workspace=ws), SANDBOX_HOME, "/tmp", port)
        for key, value in sorted(cmd_env.items()):
            a += ["--setenv", key, value]
        size = str(self.tmp_mb * 1024 * 1024)
        view = self.view()
        # bwrap's root is an empty tmpfs: only what the view names exists inside (view.py).
        a += bwrap_args(view, size, None if file_fds is None else _opener(file_fds))
        # /tmp and /dev/shm are RAM: uncapped, each could take half the machine. bwrap's /dev is a
        # tmpfs too (uncapped), so it is remounted read-only once /dev/shm sits on it; writing to
        # the device nodes in it still works (a read-only mount does not stop that).
        a += ["--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
        # /proc read-only whole: run as root, the command's uid is the host's 0 (without any
        # capability), and /proc/sys checks the uid, not a capability: writable, it set
        # kernel.core_pattern and the kernel ran the model's program as host root. bwrap covers
        # /proc/sys only when access(W_OK) succeeds, so it is not left to bwrap. /sys likewise.
        a += ["--proc", "/proc", "--remount-ro", "/proc", "--ro-bind", "/sys", "/sys"]
        a += ["--size", size, "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
        # No /var/tmp: a link to the private /tmp made a write to /var/tmp/x "succeed" and vanish;
        # absent, it fails and is offered as a crossing like any write outside.
        # The homes: an empty private folder each, and the toolchain folders read-only on top.
        a += view_home_args(view, size)
        # Bound again explicitly in both modes: a workspace under /tmp would otherwise be hidden by
        # the private /tmp (pytest's tmp_path is).
        a += ["--ro-bind" if spec.mode == "read-only" else "--bind", str(ws), str(ws)]
        protected = [ws / ".git", *(ws / rel for rel in PROTECTED_REL)]
        # Never writable, whatever was granted: a kernel interface, the harness's own files.
        extras = [
            Path(os.path.realpath(p))
            for p in grant.extra_writable
            if grant_refusal(Path(p)) is None
        ]
        in_protected = [e for e in extras if any(_is_under(e, p) for p in protected)]
        for e in extras:
            if e not in in_protected:
                a += ["--bind-try", str(e), str(e)]
        # Always, in read-only mode too: a grant of the workspace itself (or of a folder holding
        # it) must not make .git writable along with it.
        for p in protected:
            a += ["--ro-bind-try", str(p), str(p)]
        # A grant that names a protected path itself (approved by the person) goes on top, and the
        # protected paths beneath it are made read-only again: granting `.git/objects` for a
        # commit is not granting `.git/hooks`.
        for e in sorted(in_protected, key=lambda x: len(x.parts)):
            a += ["--bind-try", str(e), str(e)]
            for p in protected:
                if p != e and _is_under(p, e) and p not in in_protected:
                    a += ["--ro-bind-try", str(p), str(p)]
        # The interpreter and package this app runs on stay visible, read-only, last: a done
        # criterion `python -m pytest` must find the same Python inside, and an editable checkout
        # inside the workspace (cerveau on itself) must not be the model's to change: the next
        # start would run it on the host. The control files inside the workspace go the same way.
        for rt in view.runtime:
            a += ["--ro-bind-try", str(rt), str(rt)]
        for ctl in view.control:
            if _is_under(ctl, ws):
                a += ["--ro-bind-try", str(ctl), str(ctl)]
        a += self.mask_args(ws, extras)
        a += ["--remount-ro", "/", "--chdir", str(ws)]
        if seccomp_fd is not None:
            a += ["--seccomp", str(seccomp_fd)]
        a.append("--")
        if grant.network:
            fd = str(-1 if bridge_fd is None else bridge_fd)
            a += [sys.executable, "-I", "-S", str(BRIDGE), "--fd", fd, "--port", str(PROXY_PORT)]
            a.append("--")
        a += ["/bin/sh", "-c", spec.command]
        return a

    def mask_args(self, ws: Path, granted: Sequence[Path] = ()) -> list[str]:
        """Hide each existing denied path: a folder under an empty read-only tmpfs (its names
        vanish too), a file under /dev/null (unreadable: binds are nodev). Last, so a grant or a
        bind above cannot uncover one: the person's deny list wins over a per-command grant."""
        out: list[str] = []
        view = self.view()
        for p in maskable(self.deny_read, ws, keep=runtime_dirs(), hidden=(Path("/tmp"),)):
            if not view.bound(p) and not any(_is_under(p, g) for g in granted):
                continue  # not in the view at all: absent, nothing to mask
            if p.is_dir():
                out += ["--size", "4096", "--tmpfs", str(p), "--remount-ro", str(p)]
            else:
                out += ["--ro-bind", "/dev/null", str(p)]
        return out

    @contextmanager
    def _launch(
        self, spec: CommandSpec, seccomp_fd: int, session: Session | None
    ) -> Iterator[Launch]:
        files: list[int] = []  # the bridge's end first, then the /etc files copied in
        try:
            if session is not None:
                ours, theirs = socket.socketpair()
                session.serve(handoff=ours)
                files.append(theirs.detach())
            bridge = files[0] if files else None
            argv = self.argv(spec, seccomp_fd=seccomp_fd, file_fds=files, bridge_fd=bridge)
            # bwrap's own environment; the command's is set inside (--clearenv, --setenv).
            yield Launch(argv, {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, tuple(files))
        finally:
            for f in files:
                os.close(f)

    def version(self) -> str:
        return bwrap_version(self.bwrap)


def _opener(fds: list[int]) -> Callable[[Path], int]:
    """Open an /etc file for bwrap to copy in: without blocking (a FIFO would hang bwrap) and only
    a regular file; each descriptor recorded in `fds` for the caller to pass and close."""

    def open_file(path: Path) -> int:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{path} is not a regular file")
        fds.append(fd)
        return fd

    return open_file


def bwrap_version(bwrap: str) -> str:
    from .. import host_process

    try:
        out = host_process.run([bwrap, "--version"], text=True, timeout=5)
        return out.stdout.strip() or out.stderr.strip()
    except (OSError, host_process.SubprocessError):
        return "unknown"
