"""The contract every enforcement backend meets (Runner: run one shell command inside the
boundary), and EnforcingRunner, the one template the enforcing backends (bubblewrap.py,
landlock.py) run a command through. Grant, CommandSpec and CommandResult live in command.py and
are imported from here."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, TypedDict

from .command import CommandResult, CommandSpec, Grant
from .limits import CommandGroup, ProcessCap
from .netproxy import NO_PROXY_KEYS, NetProxy, Session, proxy_env, tell_refusals
from .none import NoSandbox
from .process import kill_group, minimal_env, run_process
from .protect import StateDirRefused, default_denied, ensure_state_dir
from .seccomp_filter import Inet, bpf_fd
from .served import Served, spawn_served
from .setid import setid_note, sweep_all
from .view import MachineView, machine_view

__all__ = ["Bounds", "CommandResult", "CommandSpec", "EnforcingRunner", "Grant", "Launch", "Runner"]


class Runner(Protocol):
    backend: str  # "bubblewrap" | "landlock" | "none"
    enforced: bool

    def run(self, spec: CommandSpec) -> CommandResult: ...

    def kill_background(self) -> None:
        """Kill every process group this runner left running (called by Engine.close)."""
        ...


class Bounds(TypedDict, total=False):
    """What an enforcing runner is built with besides its environment allow list (select.py
    passes the person's settings)."""

    deny_read: Sequence[Path] | None  # None: the default secrets (protect.default_denied)
    tmp_mb: int  # the size of /tmp and /dev/shm (bubblewrap)
    max_procs: int  # the pids cgroup's cap
    read_allow: Sequence[Path]  # read-only besides the machine view
    proxy: NetProxy | None  # a network grant's proxy (tests give one with their own resolver)


@dataclass(frozen=True)
class Launch:
    """How a backend starts one command: the launcher's argv (bwrap's, or the Landlock helper's)
    and its environment, and the descriptors it must inherit besides the seccomp filter's."""

    argv: list[str]
    env: dict[str, str]
    fds: tuple[int, ...] = ()


class EnforcingRunner:
    """The enforced run, once for both backends. full-access is the person's choice of no
    boundary: it runs as a plain process and the result says so. Every other mode: the state
    folder checked, a pids cgroup (fail closed), the seccomp filter, the proxy's session for a
    network grant, the backend's `_launch` (the one step that differs: how argv and environment
    wrap the command), the capped run; then nothing of the command outlives it (its group, its
    cgroup), the proxy's refusals and the set-id sweep go into the result."""

    backend = "?"
    enforced = True

    def __init__(
        self,
        env_allow: tuple[str, ...] | list[str] = (),
        *,
        deny_read: Sequence[Path] | None = None,
        tmp_mb: int = 512,
        max_procs: int = 512,
        read_allow: Sequence[Path] = (),
        proxy: NetProxy | None = None,
    ) -> None:
        """The keywords are Bounds."""
        self.env_allow = tuple(env_allow)
        self._plain = NoSandbox(self.env_allow)
        # Built bare (tests, tools), a runner still masks the default secrets: secure by default.
        self.deny_read = list(default_denied() if deny_read is None else deny_read)
        self.tmp_mb = tmp_mb
        self.cap = ProcessCap(max_procs)
        self.read_allow = tuple(read_allow)
        self.proxy = proxy or NetProxy()
        self._view: MachineView | None = None
        self._cgroups: list[CommandGroup] = []  # not removed yet: kill_background retries
        self._lock = threading.Lock()

    def inet(self, spec: CommandSpec) -> Inet:
        """The IPv4/IPv6 sockets this command's seccomp filter allows (seccomp_filter.Inet)."""
        raise NotImplementedError

    def _launch(
        self, spec: CommandSpec, seccomp_fd: int, session: Session | None
    ) -> AbstractContextManager[Launch]:
        """The backend's wrapping of `spec` (its workspace a real path), undone when the run
        has ended. `session`: with a network grant, the proxy's, for the backend to serve where
        its command can reach it."""
        raise NotImplementedError

    def run(self, spec: CommandSpec) -> CommandResult:
        if spec.mode == "full-access":
            plain = self._plain.run(spec)
            plain.notes.append("full-access: ran without the sandbox")
            return plain
        ws = Path(os.path.realpath(spec.workspace))
        try:
            ensure_state_dir(ws)
        except (StateDirRefused, OSError) as exc:
            return CommandResult(exit_code=126, output=f"cerveau: {exc}\n", notes=[str(exc)])
        try:
            group = self.cap.new_group()
        except OSError as exc:  # fail closed: never run past a cap we said we hold
            msg = f"cerveau: could not create the command's process-count cgroup: {exc}"
            return CommandResult(exit_code=126, output=msg + "\n", notes=[msg])
        spec = replace(spec, workspace=ws)
        grant = spec.grant or Grant()
        session = self.proxy.session(grant.hosts) if grant.network else None
        result: CommandResult | None = None
        try:
            with ExitStack() as cleanup:
                seccomp = bpf_fd(self.inet(spec))
                cleanup.callback(os.close, seccomp)
                launch = cleanup.enter_context(self._launch(spec, seccomp, session))
                result = run_process(
                    [*group.wrapper, *launch.argv],
                    cwd=ws,
                    env=launch.env,
                    timeout=spec.timeout,
                    output_cap=spec.output_cap,
                    cancel=spec.cancel,
                    pass_fds=(seccomp, *launch.fds),
                )
        finally:
            refused = session.close() if session is not None else []
            # Nothing outlives its command: a process left running changed git settings after
            # the guard's after-check, and the next command's "before" already held the change.
            # The process group first, then the cgroup (a `setsid` process leaves the group, not
            # the cgroup). Under bubblewrap the PID namespace already took them: this is for the
            # moment between its init exiting and the kernel reaping the rest.
            if result is not None and result.background_pgid is not None:
                kill_group(result.background_pgid)
            if not group.remove(kill=True):
                with self._lock:
                    self._cgroups.append(group)
        assert result is not None  # run_process returned, or its exception went up
        tell_refusals(result, refused)
        _sweep_setid(result, ws, spec)
        return result

    def start(self, spec: CommandSpec) -> Served:
        """A long-lived process with pipes (an MCP server) inside the same boundary as `run`
        (served.py): `spec.command` is its shell line, its timeout and output cap unused. Never
        full-access: a server is not a command the person chose to run unsandboxed. Raises
        OSError (or StateDirRefused) when the boundary cannot be built: it does not start."""
        if spec.mode == "full-access":
            spec = replace(spec, mode="workspace-write")
        ws = Path(os.path.realpath(spec.workspace))
        ensure_state_dir(ws)
        spec = replace(spec, workspace=ws)
        grant = spec.grant or Grant()
        cleanup = ExitStack()
        try:
            group = self.cap.new_group()  # fail closed, as a command does
            cleanup.callback(self._remove_group, group)
            session = self.proxy.session(grant.hosts) if grant.network else None
            if session is not None:
                cleanup.callback(session.close)
            seccomp = bpf_fd(self.inet(spec))
            try:
                launch = cleanup.enter_context(self._launch(spec, seccomp, session))
                proc = spawn_served(
                    [*group.wrapper, *launch.argv],
                    cwd=str(ws),
                    env=launch.env,
                    pass_fds=(seccomp, *launch.fds),
                )
            finally:
                os.close(seccomp)  # the launcher holds its own copy
        except BaseException:
            cleanup.close()
            raise
        return Served(proc, cleanup)

    def _remove_group(self, group: CommandGroup) -> None:
        if not group.remove(kill=True):
            with self._lock:
                self._cgroups.append(group)

    def command_env(
        self, spec: CommandSpec, home: str, tmp: str, proxy_port: int | None
    ) -> dict[str, str]:
        """The command's environment: the minimal one, its private home and temp folder, the
        toolchains' variables, and with a grant the proxy's (no exemption from it: "not through
        the proxy" means "nowhere")."""
        out = minimal_env(spec.workspace, self.env_allow, spec.env)
        out["HOME"] = home
        out["TMPDIR"] = tmp
        for key, value in self.view().env:  # toolchains that find themselves from $HOME
            out.setdefault(key, value)
        if proxy_port is not None:
            for key in NO_PROXY_KEYS:
                out.pop(key, None)
            out.update(proxy_env(proxy_port))
        return out

    def view(self) -> MachineView:
        """The machine as commands see it; taken once per runner (homes and toolchains do not
        move during a session), so a command costs no extra walk."""
        if self._view is None:
            self._view = machine_view(self.read_allow)
        return self._view

    def kill_background(self) -> None:
        with self._lock:
            cgroups, self._cgroups = self._cgroups, []
        for group in cgroups:
            group.remove(kill=True)
        self._plain.kill_background()  # full-access commands
        self.proxy.close()


def _sweep_setid(result: CommandResult, ws: Path, spec: CommandSpec) -> None:
    """No set-id bit leaves the sandbox (setid.py): what the command could write is swept once it
    has ended (nothing of it outlives its command on either backend), and the model is told."""
    roots = [ws] if spec.mode != "read-only" else []
    roots += [Path(p) for p in (spec.grant.extra_writable if spec.grant else ())]
    found = sweep_all(roots)
    if found:
        note = setid_note(found)
        result.notes.append(note)
        result.output = f"{result.output.rstrip()}\n{note}" if result.output.strip() else note
