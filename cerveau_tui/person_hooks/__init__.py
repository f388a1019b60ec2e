"""The person's hooks: commands from `[[hooks.<event>]]` in their own config, run at the loop's
hook points (hooks.py) under one contract (contract.py), in the sandbox unless the person said
`where = "host"` for that hook (run.py); hook.py maps each event to its point."""

from __future__ import annotations

import shlex
from typing import get_args

from ..bus import Emitter
from ..config import HooksConfig, Settings
from ..config_sections import HookEvent
from ..protocol import NoticePayload
from ..sandbox.base import Runner
from . import contract
from .hook import PersonHooks
from .run import HookRunner

__all__ = ["PersonHooks", "describe_hooks", "person_hooks"]

#: In the order a session meets them (config_sections.HookEvent is the one list).
EVENTS: tuple[str, ...] = get_args(HookEvent)


def person_hooks(settings: Settings, runner: Runner, bus: Emitter) -> PersonHooks | None:
    """The session's PersonHooks, or None when the person wrote none. A workspace config's
    hooks the person has not trusted are said here, once, by name."""
    held = held_back(settings)
    if held:
        bus.emit(
            NoticePayload(
                text=f"not run: {', '.join(held)} from this workspace's .cerveau/config.toml "
                "(hooks come from your own config; trust that file to run its hooks)",
                level="warning",
                source="hooks",
            )
        )
    if not any(getattr(settings.hooks, e) for e in EVENTS):
        return None
    confined = [h for e in EVENTS for h in getattr(settings.hooks, e) if h.where == "sandbox"]
    if confined and not runner.enforced and settings.sandbox != "full-access":
        bus.emit(
            NoticePayload(
                text='no sandbox is enforced here: your hooks marked "sandbox" will not run '
                '(cerveau doctor says why; where = "host" runs one with your rights)',
                level="warning",
                source="hooks",
            )
        )
    run = HookRunner(runner, settings.workspace, settings.sandbox, bus)
    return PersonHooks(settings.hooks, run, bus)


def describe_hooks(config: HooksConfig) -> list[str]:
    """One line per hook, for `cerveau doctor`."""
    lines = []
    for event in EVENTS:
        for h in getattr(config, event):
            name = contract.hook_name(h.name, h.command)
            argv = contract.argv_of(h.command)
            on = f" match {h.match!r}" if h.match else ""
            lines.append(f"{event}: {name} ({h.where}, {h.timeout_s:g} s{on}): {shlex.join(argv)}")
    return lines


def held_back(settings: Settings) -> list[str]:
    """The workspace config's hooks that were not applied (the person has not trusted it)."""
    return [h["key"] for h in settings.workspace_held_back if str(h["key"]).startswith("hooks.")]
