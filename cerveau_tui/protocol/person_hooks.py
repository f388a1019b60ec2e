"""The payload of a person's hook run (person_hooks/): one event per run, so a hook that blocked,
failed or hung is on the record beside the call it judged, never a silent side effect."""

from __future__ import annotations

from typing import Literal

from .base import Payload

#: What a run came to: `ok` (exit 0), `blocked` (exit 2: the call or prompt refused, or the model
#: sent back to work), `error` (any other exit: said, never blocking), `timeout` (killed at its
#: timeout_s with its process group), `stopped` (the person's interrupt killed it).
HookOutcome = Literal["ok", "blocked", "error", "timeout", "stopped"]


class HookRan(Payload):
    event_type = "hook_ran"

    name: str
    event: str  # session_start, user_prompt, pre_tool, ...
    exit: int | None  # None: killed (timeout, interrupt) before it exited
    ms: int
    outcome: HookOutcome
    where: Literal["sandbox", "host"] = "sandbox"
    tool: str = ""  # the call's tool, for the tool events
    message: str = ""  # the head of its stderr when it blocked or failed: what the person reads
