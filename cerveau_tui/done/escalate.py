"""What a rung does to the rounds after it: the locks it sets and the message it sends.

Apart from the hook because this is the part of the ladder that changes what the model CAN do
(ladder.py says why each rung exists; gate.py decides when one is climbed): R1 makes the next
round read-only (other calls refused; the tools sent never change, loop/narrow.py); R2 turns the server's reasoning on, else raises the token cap; R3 holds the
file tools to the one file named, and when no file can be named makes the round read-only, since
a lock on "one file" with no file to name was only a message; R4 asks the expert.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import protocol as P
from ..hooks import Reenter, TurnContext
from .criteria import Report
from .expert import Expert
from .ladder import READ_ONLY_TOOLS, rung_max_tokens, rung_refusal, steer_message

#: R2's switch: (request fields, how to say it), or None when the server has none (reasoning_switch).
ReasoningSwitch = Callable[[], "tuple[dict[str, Any], str] | None"]


@dataclass
class RoundLocks:
    """What the rungs climbed this turn changed, read by every call and every request."""

    read_only_round: int | None = None  # the iteration R1 (or R3 with no file) made read-only
    read_only_rung: str = "R1"
    narrow: tuple[int, str] | None = None  # R3's iteration and its one file
    reasoning_extra: dict[str, Any] = field(default_factory=dict)  # R2's switch, once it is on

    def refusal(self, iteration: int, tool: str, arguments: dict[str, Any]) -> str | None:
        return rung_refusal(
            self.read_only_round, self.narrow, iteration, tool, arguments, self.read_only_rung
        )

    def read_only_next(self, ctx: TurnContext, rung: str) -> tuple[str, ...]:
        self.read_only_round, self.read_only_rung = ctx.iteration + 1, rung
        return READ_ONLY_TOOLS


def escalate(
    ctx: TurnContext,
    locks: RoundLocks,
    rung: str,
    report: Report,
    *,
    stall_cycles: int,
    errors: Sequence[tuple[str, int]],
    focus: Callable[[], str | None],
    handoff: Callable[[], str],
    reasoning: ReasoningSwitch | None,
    expert: Expert | None,
    notes: list[str],
) -> Reenter:
    """Climb to `rung`: set its locks, say so (an escalation event), and re-enter with its
    message. `errors` are (error, age), oldest first; `focus` names R3's file (None: none)."""
    text = f"escalation {rung}: no progress in {stall_cycles} cycles"
    advice: str | None = None
    room: str | None = None
    named: str | None = None
    cap: int | None = None
    only: tuple[str, ...] = ()
    if rung == "R1":
        only = locks.read_only_next(ctx, rung)
        change = "read-only tools for one round: " + ", ".join(READ_ONLY_TOOLS)
    elif rung == "R2":
        switch = reasoning() if reasoning is not None else None
        if switch is not None:
            locks.reasoning_extra, room = switch
        else:
            cap = rung_max_tokens(rung, ctx.max_tokens)
            room = f"the token cap for your replies is raised from {ctx.max_tokens} to {cap}"
        change = room
    elif rung == "R3":
        named = focus()
        if named is not None:
            locks.narrow = (ctx.iteration + 1, named)
            change = "narrowed to one file and one error"
        else:
            only = locks.read_only_next(ctx, rung)
            change = "no file can be named: read-only tools for one round: " + ", ".join(only)
    elif rung == "R4" and expert is not None:
        try:
            advice = expert(handoff())
        except Exception as exc:  # noqa: BLE001 - an unreachable expert is a failed rung
            advice = f"(the expert could not be reached: {exc})"
        change = "an expert model was consulted"
    else:
        change = rung
    ctx.emit(
        P.Escalation(rung=rung, unmet=report.unmet(), text=f"{text}; {change}", change=change),
    )
    message = steer_message(rung, report, errors, named, advice, room)
    if notes:
        message = "\n".join(notes) + "\n" + message
    return Reenter(
        message, max_tokens=cap, only_tools=only, request_extra=dict(locks.reasoning_extra)
    )
