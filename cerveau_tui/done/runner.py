"""Criterion runners: how a criterion command reaches a process.

The engine passes `sandbox_runner(...)`: criteria run through the same boundary as the model's
commands, because a criterion is a command from a config file in the workspace, which the model
can write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .criteria import CriterionRunner


def sandbox_runner(
    runner: Any, workspace: Path, mode: str = "workspace-write", output_cap: int = 30_000
) -> CriterionRunner:
    """A CriterionRunner over a sandbox.base.Runner (bubblewrap, landlock or none)."""

    def run(command: str, timeout: float) -> tuple[int | None, str]:
        result = runner.run(
            command, workspace=workspace, mode=mode, timeout=timeout, output_cap=output_cap
        )
        return result.exit_code, result.output

    return run
