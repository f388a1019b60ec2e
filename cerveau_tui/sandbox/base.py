"""The contract every enforcement backend meets (Runner: run one shell command inside the
boundary), and EnforcingRunner, the base the enforcing backends (bubblewrap.py, landlock.py)
share. Grant and CommandResult live in command.py and are imported from here."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from .command import CommandResult, Grant
from .limits import ProcessCap
from .none import NoSandbox
from .protect import StateDirRefused, default_denied, ensure_state_dir
from .setid import setid_note, sweep_all

__all__ = ["CommandResult", "EnforcingRunner", "Grant", "Runner"]


class Runner(Protocol):
    backend: str  # "bubblewrap" | "landlock" | "none"
    enforced: bool

    def run(
        self,
        command: str,
        *,
        workspace: Path,
        mode: str = "workspace-write",  # read-only | workspace-write | full-access
        timeout: float = 120.0,
        output_cap: int = 30_000,
        grant: Grant | None = None,
        cancel: threading.Event | None = None,
        env: dict[str, str] | None = None,
    ) -> CommandResult: ...

    def kill_background(self) -> None:
        """Kill every process group this runner left running (called by Engine.close)."""
        ...


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
        result = self._run_enforced(command, ws, mode, timeout, output_cap, grant, cancel, env)
        _sweep_setid(result, ws, mode, grant)
        return result

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


def _sweep_setid(result: CommandResult, ws: Path, mode: str, grant: Grant | None) -> None:
    """No set-id bit leaves the sandbox (setid.py): what the command could write is swept once it
    has ended (nothing of it outlives its command on either backend), and the model is told."""
    roots = [ws] if mode != "read-only" else []
    roots += [Path(p) for p in (grant.extra_writable if grant else ())]
    found = sweep_all(roots)
    if found:
        note = setid_note(found)
        result.notes.append(note)
        result.output = f"{result.output.rstrip()}\n{note}" if result.output.strip() else note
