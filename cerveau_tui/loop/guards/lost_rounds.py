"""Rounds lost, and to what: read from a session's events (`cerveau run --json`, one list a turn).

Why (issue 24): a new user's first task on the embedded SmolLM2 took 14 model turns over 40
minutes and the done check never ran once; the rounds were lost to the harness, not the model.
To keep that measured, each round (an `iteration_started` and what follows it) is given at most
one cause, the first that applies in this order:

- timeout: the model call hit its deadline (an `error` of class `deadline`), a command was
  killed at its time limit (`[killed: timed out` in its result), or the turn has no end event
  (killed at the run's time limit: its last round, whatever else it holds);
- truncation_repeat: a tool call cut off at the cap again, the same tool at the same cap as a cut
  before it in the turn (the harness offered the same request twice: it never should);
- truncated: a tool call cut off at the cap, the first time at that cap;
- repetition_cut: the reply was cut while it streamed for repeating itself (guards/repetition.py);
- refused_action: an action the constrained schema allowed and the tool refused (a result of
  error class `args`, with no exit code, for a call `via` constrained): a gap in the schema, or
  a call the world refused (no such file, no plan yet); a command that ran and failed is not one
  (bash reports a non-zero exit as `args` too: the first count took `test_add: not found` for one);
- copied_failure: a call that failed (or the repeat guard refused) exactly as a call of an
  EARLIER turn had failed: the copy the history offered (guards/stops.py folds those);
- repeat_stop: the repeat guard refused the call (the round ran nothing).

Pure: the events are dicts as printed; nothing is read from disk.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

CAUSES = (
    "timeout",
    "truncation_repeat",
    "truncated",
    "repetition_cut",
    "refused_action",
    "copied_failure",
    "repeat_stop",
)
_CUT = re.compile(r"^(?P<tool>.*?) cut off at (?P<cap>\d+) tokens")
_FAILING = ("failed", "guarded")

Event = dict[str, Any]


@dataclass
class LostRounds:
    rounds: int = 0
    turns: int = 0
    lost: Counter[str] = field(default_factory=Counter)
    ended: list[str] = field(default_factory=list)  # each turn's end reason ("" when none)
    checks: int = 0  # times the done check ran on an answer (`check` events, prechecks not)

    def line(self) -> str:
        causes = ", ".join(f"{c} {self.lost[c]}" for c in CAUSES)
        return (
            f"{self.rounds} rounds in {self.turns} turns; lost: {causes}; "
            f"done check ran {self.checks}x; turns ended: {', '.join(self.ended)}"
        )


def _key(call: dict[str, Any]) -> str:
    args = call.get("arguments")
    text = json.dumps(args, sort_keys=True) if isinstance(args, dict) else str(args)
    return f"{call.get('name', '')}\x00{text}"


def _split_rounds(events: Sequence[Event]) -> list[list[Event]]:
    out: list[list[Event]] = []
    for e in events:
        if e.get("type") == "iteration_started":
            out.append([])
        elif out:
            out[-1].append(e)
    return out


def _cause(
    round_: list[Event], cuts: set[tuple[str, str]], failed_before: set[str]
) -> tuple[str | None, set[str]]:
    """(the round's cause or None, the failing calls it made)."""
    calls: dict[str, dict[str, Any]] = {}
    causes: list[str] = []
    failing: set[str] = set()
    for e in round_:
        kind, p = e.get("type"), e.get("payload") or {}
        if kind == "tool_call" and p.get("via") != "person":
            calls[str(p.get("call_id"))] = p
        elif kind == "error" and p.get("error_class") == "deadline":
            causes.append("timeout")
        elif kind == "guard_tripped" and p.get("guard") == "truncation":
            m = _CUT.match(str(p.get("reason", "")))
            cut = (m.group("tool"), m.group("cap")) if m else (str(p.get("reason")), "")
            causes.append("truncation_repeat" if cut in cuts else "truncated")
            cuts.add(cut)
        elif kind == "guard_tripped" and p.get("guard") == "repetition":
            causes.append("repetition_cut")
        elif kind == "tool_result" and str(p.get("call_id")) in calls:
            call = calls[str(p["call_id"])]
            if "[killed: timed out" in str(p.get("output", "")):
                causes.append("timeout")
            if p.get("status") in _FAILING:
                key = _key(call)
                failing.add(key)
                # A command that ran has an exit code: it failed, the tool refused nothing.
                ran = p.get("exit_code") is not None
                if p.get("error_class") == "args" and call.get("via") == "constrained" and not ran:
                    causes.append("refused_action")
                if key in failed_before:
                    causes.append("copied_failure")
                if p.get("status") == "guarded":
                    causes.append("repeat_stop")
    first = min(causes, key=CAUSES.index) if causes else None
    return first, failing


def count_lost(turns: Sequence[Sequence[Event]]) -> LostRounds:
    """Each turn's events in order (one `cerveau run --json` each): the rounds and their causes."""
    out = LostRounds()
    failed_before: set[str] = set()  # the failing calls of earlier turns
    for events in turns:
        out.turns += 1
        ended = [e for e in events if e.get("type") == "turn_ended"]
        out.ended.append(str((ended[-1].get("payload") or {}).get("reason", "")) if ended else "")
        out.checks += sum(
            1
            for e in events
            if e.get("type") == "check" and not (e.get("payload") or {}).get("precheck")
        )
        cuts: set[tuple[str, str]] = set()
        this_turn: set[str] = set()
        rounds = _split_rounds(events)
        for i, round_ in enumerate(rounds):
            out.rounds += 1
            cause, failing = _cause(round_, cuts, failed_before)
            if not ended and i == len(rounds) - 1:
                # Killed mid-round (a cap doubled after cuts ran a turn past 150 s at 256).
                cause = "timeout"
            this_turn |= failing
            if cause is not None:
                out.lost[cause] += 1
        failed_before |= this_turn
    return out
