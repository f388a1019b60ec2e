"""How a criterion command reaches a process: through the sandbox.

The session passes `run_in_sandbox(...)`: criteria run through the same boundary as the model's
commands, because a criterion is a command from a config file in the workspace, which the model
can write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from ..adapters.base import RunCommand
from ..sandbox.base import Runner
from ..sandbox.command import CommandSpec

#: What a criterion "returns" when the turn was stopped before it could start: not run, and no
#: process spawned only to be killed at its first poll.
NOT_RUN = "[not run: the person stopped the turn]"


class SandboxRun:
    """A RunCommand over a sandbox.base.Runner (bubblewrap, landlock or none) that the turn's
    stop reaches: `cancel` is the engine's event, bound at each turn's start (GateHook).

    Issue 33: Esc Esc during the precheck set the event, but the check's run never looked at it;
    the suite ran on for half a minute. The runner kills the process group when it is set."""

    def __init__(
        self,
        sandbox: Runner,
        workspace: Path,
        mode: str = "workspace-write",
        output_cap: int = 30_000,
    ) -> None:
        self.sandbox, self.workspace, self.mode, self.output_cap = (
            sandbox,
            workspace,
            mode,
            output_cap,
        )
        self.cancel: threading.Event | None = None

    def __call__(self, command: str, timeout: float) -> tuple[int | None, str]:
        cancel = self.cancel
        if cancel is not None and cancel.is_set():
            return None, NOT_RUN
        result = self.sandbox.run(
            CommandSpec(
                command,
                workspace=self.workspace,
                mode=self.mode,
                timeout=timeout,
                output_cap=self.output_cap,
                cancel=cancel,
            )
        )
        return result.exit_code, result.output


def run_in_sandbox(
    sandbox: Runner, workspace: Path, mode: str = "workspace-write", output_cap: int = 30_000
) -> SandboxRun:
    """A RunCommand over a sandbox.base.Runner (bubblewrap, landlock or none)."""
    return SandboxRun(sandbox, workspace, mode, output_cap)


def proof_runner(
    sandbox: Runner, workspace: Path, mode: str = "workspace-write"
) -> SandboxRun | None:
    """What proves the detected check can run (`import pytest`), in the interpreter the check
    will get: the same sandbox. None when the sandbox is not enforced: `python3 -c 'import
    pytest'` puts the workspace first on sys.path, so a pytest.py planted there would run with
    the person's full rights before anyone said yes (the check itself asks first: `consents`)."""
    if not sandbox.enforced:
        return None
    return SandboxRun(sandbox, workspace, mode, 4000)


def bind_cancel(run: RunCommand, cancel: threading.Event | None) -> None:
    """Let the turn's stop reach `run`'s processes, when it is one that can be stopped (an
    injected test double is a plain function and runs to its end)."""
    if isinstance(run, SandboxRun):
        run.cancel = cancel


#: What the person is told when a done check would run without the sandbox holding it.
UNENFORCED = (
    "the sandbox is NOT enforced on this machine, so the done check would run with your full "
    "rights (it may come from this workspace's .cerveau/config.toml, or a repository's tests)"
)


def consents(commands: list[str], ask: Callable[[str, str], bool | None]) -> bool:
    """Under a sandbox that is not enforced, a done check runs only with the person's yes, as
    every model command does then (policy.py): a cloned repository's `[done]` command, or the
    conftest.py that `pytest` imports, would otherwise run with the person's full rights at the
    first turn's precheck. Headless (nobody to ask) is a no."""
    return ask("run the done check: " + "; ".join(commands), UNENFORCED) is True
