"""What the gate tells the model, and the facts it picks for it (pure).

Apart from the hook so the wording can be read and tested without running a turn: these strings
are the whole interface between the gate and a small model, and a vague one costs a cycle.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..redact import mask_secrets
from .criteria import DoneSet, Report
from .gate import Decision

_FILE_REF = re.compile(r"([\w./-]+\.\w+):\d+")


def reenter_message(report: Report, decision: Decision, max_stall: int, notes: list[str]) -> str:
    if decision.progress:
        head = f"Progress ({decision.why}), but the done criteria are not all met yet. Keep going."
    elif decision.why == "first check":
        head = "The done check ran after your answer and criteria are unmet, so the turn continues."
    else:
        head = (
            f"No progress since the best state so far ({decision.why}; cycle {decision.stall} "
            f"of {max_stall} before escalation). Change your approach."
        )
    if report.touched_protected:
        head += (
            " Note: you edited protected paths ("
            + ", ".join(report.touched_protected)
            + "); that is reported to the person and does not count as a fix."
        )
    return "\n".join([*notes, head, report.detail()])


def focus_file(
    workspace: Path, done: DoneSet, report: Report, written: Sequence[str]
) -> str | None:
    """The one file R3 narrows to: a non-protected file named in the failing output, the
    session's own writes first; else the last non-protected file written.

    Never a protected one: narrowing a stalled model onto the test file would point it at the
    shortest wrong way out.
    """
    named: list[str] = []
    for name in report.unmet():
        for m in _FILE_REF.finditer(report.outputs.get(name, "")):
            rel = m.group(1).removeprefix("./")
            if (workspace / rel).is_file() and not done.touched_protected([rel]):
                named.append(rel)
    for rel in named:
        if rel in written:
            return rel
    if named:
        return named[0]
    protected = set(done.touched_protected(written))
    candidates = [p for p in written if p not in protected and not p.startswith(".cerveau/")]
    return candidates[-1] if candidates else None


def tried_calls(calls: Sequence[Any]) -> list[str]:
    """One line per call of the turn (hooks.CallRecord), for the handoff's "what was tried"."""
    return [
        f"{c.name} {c.command or ', '.join(c.wrote) or ''}".strip()
        + f" -> {'ok' if c.ok else 'failed'}"
        for c in calls
    ]


def gate_section(done: DoneSet) -> str:
    """The definition of done, as the system prompt (or a mid-session reminder) states it."""
    # A criterion from the person's own config may quote a credential (`curl -H "Authorization:
    # Bearer ..." http://user:pw@host/health`): the model needs what is checked, not the key.
    names = ", ".join(
        f"`{c.name}` ({mask_secrets(c.command) or 'no command'})" for c in done.criteria
    )
    text = (
        f"This workspace has a definition of done: {names}. When you stop calling tools the "
        "harness runs these checks; if any is unmet, you get the output and the turn goes on."
    )
    if done.protected:
        text += (
            " Protected paths (" + ", ".join(done.protected) + ") are the measurement: fix "
            "the code, not the tests. Any edit to them is reported to the person."
        )
    return text


def undecided_notice(command: str) -> str:
    return (
        f"no done gate: the detected check `{command}` is not in use until it is chosen "
        '([done] gate = "auto", or `cerveau run --gate auto`)'
    )


def cannot_run_notice(command: str, cause: str) -> str:
    """The detected check that was proved unable to run: said, never offered nor counted (issue
    33: it "ran" every turn as "unmet, 0 errors" while it was "No module named pytest")."""
    return (
        f"no done gate: the detected check `{command}` cannot run here: {cause} "
        "(install it where the check runs, or set [done] gate to a command that runs)"
    )
