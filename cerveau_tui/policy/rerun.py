"""After a command failed inside the sandbox: the ask to rerun it with the room it lacked.

A command that failed with a denial-looking error gets an ask to rerun with more room (the paths
it was refused, or the network): under `on-failure` that is the policy itself; under `on-request`
and `untrusted` a refusal the person could grant would otherwise be a silent failure the model
cannot fix. Never under `never`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..sandbox.base import Grant
from ..tools.base import Declared
from .commands import COMMAND_TOOLS, absent_paths, denial_kinds, denied_paths
from .paths import Boundary, display, hidden_writes, realpath
from .scopes import command_choices
from .verdict import Verdict


class Asking(Protocol):
    """What of the policy a rerun's question reads (policy.Policy)."""

    @property
    def approval(self) -> str: ...
    @property
    def enforced(self) -> bool: ...
    @property
    def mode(self) -> str: ...
    @property
    def boundary(self) -> Boundary: ...
    @property
    def workspace(self) -> Path: ...
    @property
    def network_grant(self) -> Callable[[], bool]: ...

    def _paths(self, paths: list[Path], *, drop_root: bool) -> list[Path]: ...
    def _needs_room(self, path: Path) -> Path | None: ...


def rerun_verdict(
    policy: Asking, tool: str, declared: Declared, exit_code: int | None, output: str
) -> Verdict | None:
    """None when there is nothing to offer."""
    if policy.approval == "never" or not policy.enforced or policy.mode == "full-access":
        return None
    if not (tool in COMMAND_TOOLS or declared.command is not None) or exit_code in (0, None):
        return None
    kinds = denial_kinds(output)
    hidden = hidden_writes(absent_paths(output), policy.boundary)
    if hidden:
        kinds.add("write")
    if not kinds:
        return None
    room: list[Path] = []
    reasons: list[str] = []
    if "write" in kinds:
        named = [realpath(p, policy.workspace) for p in denied_paths(output)]
        named += [p for p in hidden if p not in named]
        named += [p for p in policy._paths(declared.writes, drop_root=True) if p not in named]
        if policy.mode == "read-only":
            named.append(policy.workspace)
        for p in named:
            r = policy._needs_room(p)
            if r is not None and r not in room:
                room.append(r)
        if room:
            reasons.append("it was refused writes to " + ", ".join(display(r) for r in room))
    network = "network" in kinds and not policy.network_grant()
    if network:
        reasons.append("it looks like it needed the network")
    if not reasons:
        return None
    grant = Grant(extra_writable=tuple(room), network=network or bool(policy.network_grant()))
    # The choices are for what is asked: the session's own network (any host) is not, so no
    # "to host only" choice narrows it (scopes.scoped_room).
    asked = Grant(extra_writable=tuple(room), network=network)
    options = command_choices(declared.command or "", asked, policy.boundary.show)
    v = Verdict(
        "ask",
        f"failed inside the sandbox (exit {exit_code}); rerun with more room? {'; '.join(reasons)}",
        grant,
        options[-1].label,
        options[-1].key,
    )
    v.choices = tuple((o.key, o.label) for o in options)
    return v
