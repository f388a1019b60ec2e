"""The definition of done a session runs with: the written criteria, or the one gate command
`resolve_stack_for_run` put in force (the detected check, or a command given as `[done] gate`).

One mechanism, not two: a gate command is a DoneSet of one, so the precheck, the ladder, the
near-green rollback and the seal treat the detected check exactly as written criteria.
"""

from __future__ import annotations

from typing import Any

from ..adapters.registry import StackRun
from .criteria import Criterion, DoneSet, done_set_from_config

#: The name the gate command is reported under (`unmet: ["gate"]`, "met: gate").
GATE_NAME = "gate"


def gate_done_set(settings: Any, stack: StackRun | None) -> DoneSet:
    """Criteria from `[done]` when written (they win); else the gate command in force, with the
    paths that measure it protected; else no criteria (the seal alone)."""
    cfg = settings.done
    criteria = cfg.criteria if cfg.enabled else []
    if criteria or stack is None or stack.command is None:
        return done_set_from_config(criteria, cfg.protected)
    protected = tuple(dict.fromkeys([*cfg.protected, *stack.protected]))
    return DoneSet((Criterion(GATE_NAME, stack.command),), protected)
