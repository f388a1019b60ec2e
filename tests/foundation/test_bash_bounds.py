"""The model's `timeout` argument is bounded by the person's `bash_timeout_s` (issue 10)."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.sandbox.base import CommandResult
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.tools.base import ToolContext, ToolState
from cerveau_tui.tools.bash import Bash


class Recorder:
    backend, enforced = "none", False

    def __init__(self) -> None:
        self.timeouts: list[float] = []

    def run(self, spec: CommandSpec) -> CommandResult:
        self.timeouts.append(spec.timeout)
        return CommandResult(exit_code=0, output="")

    def kill_background(self) -> None:
        pass


def _timeout(tmp_path: Path, asked: int | None) -> float:
    rec = Recorder()
    ctx = ToolContext(workspace=tmp_path, state=ToolState(), runner=rec, bash_timeout=30)
    Bash().run(Bash.Args(command="true", timeout=asked), ctx)
    return rec.timeouts[0]


def test_a_huge_model_timeout_is_capped_at_the_persons(tmp_path: Path) -> None:
    assert _timeout(tmp_path, 99_999_999) == 30


def test_a_shorter_model_timeout_is_kept_and_nonsense_falls_back(tmp_path: Path) -> None:
    assert _timeout(tmp_path, 5) == 5
    assert _timeout(tmp_path, -4) == 30 and _timeout(tmp_path, None) == 30
