"""How a criterion command reaches a process: through the sandbox.

The session passes `run_in_sandbox(...)`: criteria run through the same boundary as the model's
commands, because a criterion is a command from a config file in the workspace, which the model
can write.
"""

from __future__ import annotations

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
