"""The contract every enforcement backend meets: run one shell command inside the boundary."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Grant:
    """Room an approval adds for ONE command: never "run unsandboxed", only a wider boundary."""

    extra_writable: tuple[Path, ...] = ()
    network: bool = False


@dataclass
class CommandResult:
    exit_code: int | None  # None when killed (timeout, interrupt)
    output: str  # stdout and stderr interleaved, capped
    timed_out: bool = False
    interrupted: bool = False
    truncated: bool = False  # output exceeded the cap; the middle was cut
    duration_ms: float = 0.0
    background_pgid: int | None = None  # processes left running in the command's group
    notes: list[str] = field(default_factory=list)


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
