"""The rules of the precheck that are about the person, not the check: when a green suite is worth
a question, and what a stopped or unanswered precheck says.

Issue 33, lived with in an interactive session: once the suite passed, EVERY turn ("list the
files", "say hello") first raised "the checks cannot tell whether this task gets done; continue
anyway?"; unanswered, it was denied after 120 s and the turn was lost, and "always" did not stick.
The question exists for one case: the person asks for work the check is supposed to measure
("fix the failing test") and the check already passes, so its green will prove nothing. The rule,
explicit:

- green and the task does not aim at the check (no word of testing, fixing or failing, no
  criterion named): no question; the check's green line is the only word.
- green and the task aims at it: asked once a session; a yes (any yes) holds for the session.
- no answer within the approver's timeout: the turn stops, and says "no answer", as the log does.
- stopped (Esc Esc) before or during the precheck: nothing is asked.
"""

from __future__ import annotations

import re

from .. import protocol as P
from ..hooks import Stop, TurnContext
from ..protocol import TURN_INTERRUPTED, TURN_STOPPED
from .criteria import DoneSet

#: Words that make a task about what the check measures ("fix the failing test", "make CI
#: green"); a task without one ("say hello", "list the files") is not.
AIM = re.compile(
    r"\b(tests?|testing|tested|fail\w*|fix\w*|bugs?|broken|breaks?|pass|passes|passing|"
    r"regress\w*|checks?|suites?|pytest|unittest|tox|ci|green|red)\b"
)
_WORD = re.compile(r"[a-z0-9_-]+")


def aims_at_check(task: str, done: DoneSet) -> bool:
    """Whether this turn's task could be about what the check measures."""
    low = task.lower()
    names = {c.name.lower() for c in done.criteria if len(c.name) > 2}
    return bool(AIM.search(low)) or any(w in names for w in _WORD.findall(low))


def interrupted() -> Stop:
    return Stop(TURN_INTERRUPTED, "interrupted by the person (during the done check)")


class GreenQuestion:
    """The question a green precheck may raise, and the session's answer to it."""

    def __init__(self) -> None:
        self.accepted = False  # a yes holds for the session ("always" that sticks)

    def ask(self, ctx: TurnContext, task: str, done: DoneSet, met: list[str]) -> Stop | None:
        if self.accepted or not aims_at_check(task, done) or ctx.cancelled:
            return None
        names = ", ".join(met)
        go_on = ctx.ask(
            f"The done check already passes ({names}) before any change.",
            "the checks cannot tell whether this task gets done; continue anyway?",
        )
        if ctx.cancelled or ctx.answer_by == "stopped":
            return interrupted()
        if go_on is False:
            if ctx.answer_by == "timeout":
                text = f"no answer to the question (the done check already passes: {names})"
                ctx.emit(P.NoticePayload(text=f"stopped: {text}", level="warning"))
                return Stop(TURN_STOPPED, message=f"{text}; nothing was done")
            ctx.emit(P.NoticePayload(text=f"stopped: the done check already passes ({names})"))
            return Stop(
                TURN_STOPPED,
                message=f"the done check already passes ({names}); stopped at the person's word",
            )
        self.accepted = go_on is True
        ctx.emit(
            P.NoticePayload(
                text=f"the done check already passes before any change ({names}); continuing"
            ),
        )
        return None
