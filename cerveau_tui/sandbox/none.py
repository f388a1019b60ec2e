"""No enforcement: commands run as plain processes in their own process group.

Used when neither bubblewrap nor Landlock can be enforced, and by the enforcing backends for
full-access. The policy layer must then treat every command in read-only and workspace-write
modes as a crossing; this backend only provides the hygiene of process.py (own session, minimal
environment, no inherited descriptors, a group killed on timeout).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from . import reaper
from .command import CommandResult, CommandSpec
from .process import kill_group, minimal_env, run_process

#: Exec'd before the shell: the command gets SIGKILL when the session dies (see die_exec.py).
DIE_EXEC = Path(__file__).with_name("die_exec.py")


class NoSandbox:
    backend = "none"
    enforced = False
    gaps: list[str] = [
        "commands run with your full rights: the policy asks before every command in read-only "
        "and workspace-write modes",
        "no deny-read masking: a command can read every secret you can",
        "no read-only .cerveau/ or .git/: a command can rewrite the harness's state and git hooks",
        "background processes can outlive the command (not the session, kill -9 included, unless "
        "one leaves its process group with setsid)",
        "no process-count limit and no /tmp size limit",
    ]
    notes: list[str] = []

    def __init__(self, env_allow: tuple[str, ...] = (), python: str | None = None) -> None:
        self.env_allow = env_allow
        self.python = python or sys.executable
        self._groups: list[tuple[int, str]] = []  # (pgid, its leader's start time)
        self._lock = threading.Lock()

    def run(self, spec: CommandSpec) -> CommandResult:
        die = [self.python, "-I", "-S", str(DIE_EXEC), str(os.getpid()), "--"]
        result = run_process(
            [*die, "/bin/sh", "-c", spec.command],
            cwd=spec.workspace,
            env=minimal_env(spec.workspace, self.env_allow, spec.env),
            timeout=spec.timeout,
            output_cap=spec.output_cap,
            cancel=spec.cancel,
        )
        if result.background_pgid is not None:
            with self._lock:
                pgid = result.background_pgid
                self._groups.append((pgid, reaper.leader_start(pgid)))
        return result

    def kill_background(self) -> None:
        with self._lock:
            groups, self._groups = self._groups, []
        for pgid, started in groups:
            kill_group(pgid, started)
