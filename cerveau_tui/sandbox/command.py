"""What one command asks for and gives back, below every backend (re-exported by base.py, the
public place to import them from).

Apart from base.py so the process launcher (process.py) and the backends can use them while
base.py, which holds the shared enforcing base, imports the plain backend: one module for both
would be an import cycle.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Grant:
    """Room an approval adds for ONE command: never "run unsandboxed", only a wider boundary."""

    extra_writable: tuple[Path, ...] = ()
    network: bool = False
    #: With `network`: the only hosts (`host` or `host:port`, lower case) the harness's proxy lets
    #: the command reach; empty means any host, a grant the person gives spelled out as such. The
    #: proxy decides, never a parse of the command's options (Boundary IV).
    hosts: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class CommandSpec:
    """One shell command and the boundary it runs in: what every runner's `run` takes (the bash
    tool, a plan step's check, a done criterion, the self-check build one), so the eight things a
    run needs are named once and a wrapper (guarded.py) passes them on whole."""

    command: str
    workspace: Path
    mode: str = "workspace-write"  # read-only | workspace-write | full-access
    timeout: float = 120.0
    output_cap: int = 30_000
    grant: Grant | None = None
    cancel: threading.Event | None = None
    env: Mapping[str, str] | None = None  # set over the minimal environment (process.py)

    @property
    def network(self) -> bool:
        """The command was granted the network (through the harness's proxy)."""
        return self.grant is not None and self.grant.network


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
