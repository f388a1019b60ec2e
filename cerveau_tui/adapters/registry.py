"""The only module that imports concrete adapters. Core receives what `AdapterRegistry` detects.

A registry rather than imports scattered through the gate: the seam only holds if exactly one
place knows which stacks exist (`.importlinter` enforces it for core packages).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from .base import Adapter, RunCommand
from .generic import GenericAdapter
from .node import NodeAdapter
from .python import PythonAdapter
from .runnable import prove


class AdapterRegistry:
    """Adapters in priority order; the generic one last, as the fallback that always applies."""

    def __init__(self, adapters: list[Adapter] | None = None) -> None:
        self.adapters: list[Adapter] = adapters or [
            PythonAdapter(),
            NodeAdapter(),
            GenericAdapter(),
        ]

    def detect(self, workspace: Path) -> Adapter:
        for adapter in self.adapters:
            if adapter.detect(workspace):
                return adapter
        return GenericAdapter()

    def __call__(self, workspace: Path) -> Adapter:
        return self.detect(workspace)


#: Where the gate in force comes from: written criteria, the detected check (`gate = "auto"`),
#: a command given as `gate`, or none ("off", undecided, disabled, or nothing detected).
GateSource = Literal["criteria", "detected", "command", "none"]


@dataclass(frozen=True)
class StackRun:
    """What `resolve_stack_for_run` found: the stack, its usual check, and the gate in force."""

    adapter: Adapter
    detected: str | None  # the stack's usual check, in use or not
    setting: str  # `[done] gate` as configured ("" undecided, "auto", "off", or a command)
    source: GateSource
    command: str | None  # the one gate command in force; None with criteria or no gate
    why: str  # one sentence for doctor and the notices
    # What measures the detected check (the tests for pytest), protected only when it is the
    # gate in force: without it, weakening the test is the shortest way to a green "done".
    protected: tuple[str, ...] = ()
    # Why the detected check cannot run here ("No module named pytest"), when it was proved
    # (`resolve_stack_for_run(..., run=)`); such a check is never offered nor put in force.
    cannot_run: str = ""
    origin: str = ""  # where the detected check was read ("tox.ini", "Makefile"; "" default)

    @property
    def in_use(self) -> bool:
        return self.source != "none"

    @property
    def undecided(self) -> bool:
        """The person has not said whether to use the detected check (the TUI asks once)."""
        return (
            self.source == "none"
            and self.setting == ""
            and self.detected is not None
            and not self.cannot_run
        )


def resolve_stack_for_run(
    workspace: Path,
    settings: Any,
    registry: AdapterRegistry | None = None,
    run: RunCommand | None = None,
) -> StackRun:
    """The seed's resolveStackForRun: detect the stack, ask its adapter for the usual check
    (`gate_command`), and decide which gate is in force from `[done]`.

    Written criteria always win: a person who wrote the definition of done meant it. Undecided
    ("") means no gate: a check nobody agreed to would make a headless run refuse "done" on a
    suite the person knows is red for other reasons; the TUI asks instead.

    `run`: the runner the check will use (the sandbox). Given, the detected check is first proved
    runnable there (the adapter's `proof_command`, e.g. `import pytest`); one that cannot run is
    neither offered nor put in force, and `why` says what is missing.
    """
    adapter = (registry or AdapterRegistry()).detect(workspace)
    try:
        detected = adapter.gate_command(workspace)
    except OSError:  # an unreadable tree is "nothing detected", not a failed start
        detected = None
    cfg = settings.done
    setting = (cfg.gate or "").strip()
    origin = _call(adapter, "gate_source", workspace) if detected else ""
    cannot = ""
    would_use = cfg.enabled and not cfg.criteria and setting in ("", "auto", detected)
    if detected is not None and run is not None and would_use:
        proof = _call(adapter, "proof_command", detected)
        cannot = prove(proof or None, run) or ""

    def run_(source: GateSource, command: str | None, why: str) -> StackRun:
        return StackRun(adapter, detected, setting, source, command, why, (), cannot, origin)

    if cannot:
        return run_("none", None, f"the detected check `{detected}` cannot run here: {cannot}")
    if not cfg.enabled:
        return run_("none", None, "the done gate is disabled ([done] enabled = false)")
    if cfg.criteria:
        return run_("criteria", None, "the [done] criteria written in the config are in force")
    if setting == "off":
        return run_("none", None, "no gate: [done] gate = off")
    if setting == "auto":
        if detected is None:
            return run_(
                "none", None, f"gate = auto, but no usual check is known for {adapter.name}"
            )
        read = f" from {origin}" if origin else ""
        found = run_("detected", detected, f"the detected {adapter.name} check{read} (gate = auto)")
        return replace(found, protected=_protected_by(adapter, workspace))
    if setting:
        given = run_("command", setting, "the command given as [done] gate")
        # The detected check saved by its text (the TUI's yes) measures what it always did.
        same = setting == detected
        return replace(given, protected=_protected_by(adapter, workspace)) if same else given
    if detected is None:
        return run_("none", None, f"no gate: nothing to check detected for {adapter.name}")
    return run_(
        "none", None,
        "undecided: the TUI asks once; `cerveau run` uses the detected check unless told"
    )  # fmt: skip


def _protected_by(adapter: Adapter, workspace: Path) -> tuple[str, ...]:
    # Optional on the seam (an adapter without tests of its own to protect has nothing to say).
    paths = getattr(adapter, "protected_paths", None)
    if not callable(paths):
        return ()
    found = paths(workspace)
    return tuple(p for p in found if isinstance(p, str) and p) if isinstance(found, list) else ()


def _call(adapter: Adapter, method: str, arg: Any) -> str:
    # Optional on the seam: the Python adapter says where its check came from and how to prove it.
    fn = getattr(adapter, method, None)
    try:
        found = fn(arg) if callable(fn) else None
    except (OSError, ValueError):
        return ""
    return found if isinstance(found, str) else ""
