"""The done hooks a session runs, built from Settings and the stack resolved for the run.

Apart from hook.py so the gate's own file holds what the gate does, and this one what a session
gets: the seal always, the gate always (inert until a definition of done is in force, so the
person's answer to "use the detected check?" can switch it on mid-session: `retarget`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..adapters.registry import StackRun
from ..hooks import Hook
from ..sandbox.base import Runner
from .criteria import DoneSet
from .detected import gate_done_set
from .hook import GateHook, ReasoningSwitch
from .ladder import reasoning_switch
from .messages import cannot_run_notice, undecided_notice
from .near_green import Store
from .seal import SealHook, SealState


def done_hooks(
    settings: Any,
    sandbox: Runner,
    *,
    store: Store | None = None,
    stack: StackRun | None = None,
    props: Any = None,
    fingerprint: Callable[[], str] | None = None,
) -> list[Hook]:
    """[seal, gate], sharing one SealState. `stack`: resolve_stack_for_run's answer (the gate in
    force when no criteria are written); `props`: the server's /props, read for R2's switch;
    `fingerprint`: the workspace's digest, against which the check's verdict is remembered."""
    done = gate_done_set(settings, stack)
    state = SealState()
    seal = SealHook(done, state=state)
    switch: ReasoningSwitch | None = None
    if props is not None:

        def switch() -> tuple[dict[str, Any], str] | None:
            return reasoning_switch(props)

    gate = GateHook.from_settings(
        settings,
        sandbox,
        seal=state,
        store=store,
        done=done,
        reasoning=switch,
        fingerprint=fingerprint,
    )
    if stack is not None and stack.undecided and not done.criteria and stack.detected:
        gate.offer = undecided_notice(stack.detected)
    elif stack is not None and stack.cannot_run and stack.detected and not done.criteria:
        gate.offer = cannot_run_notice(stack.detected, stack.cannot_run)
        gate.cannot_run = stack.cannot_run  # the session offers no check that cannot run
    return [seal, gate]


def retarget(hooks: Iterable[Hook], done: DoneSet) -> bool:
    """Put a new definition of done in force for the seal and the gate; True when a gate took it."""
    found = False
    for hook in hooks:
        if isinstance(hook, GateHook):
            hook.use(done)
            found = True
        elif isinstance(hook, SealHook):
            hook.done = done
    return found
