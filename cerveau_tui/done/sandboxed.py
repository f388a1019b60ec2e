"""How a criterion command reaches a process: through the sandbox.

The session passes `run_in_sandbox(...)`: criteria run through the same boundary as the model's
commands, because a criterion is a command from a config file in the workspace, which the model
can write.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..adapters.base import RunCommand
from ..sandbox.base import Runner


def run_in_sandbox(
    sandbox: Runner, workspace: Path, mode: str = "workspace-write", output_cap: int = 30_000
) -> RunCommand:
    """A RunCommand over a sandbox.base.Runner (bubblewrap, landlock or none)."""

    def run(command: str, timeout: float) -> tuple[int | None, str]:
        result = sandbox.run(
            command, workspace=workspace, mode=mode, timeout=timeout, output_cap=output_cap
        )
        return result.exit_code, result.output

    return run


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
