"""What an event says to a person, in ONE place: the chat (app/routing.py) and the headless
transcript (headless.py) both print these lines, so `cerveau run` reads as the chat does.

Before, each client had its own table: the chat said "parked: parked: …" (the event's name
before a text that already began with it), "lessons learnt this turn: 0" whatever was learnt
(the reader wanted `count`, the hook sent `stored`), and headless printed `** rollback: …` for
what the chat called a warning. `describe` reads the payload as its model: a renamed field is a
type error here, not a silent default.

A line is (text, level); level is one of info, success, warning, error. None: nothing to say
(the fact is shown by a widget of its own, or is not news: a clean seal, a polish skipped for
want of a gate).
"""

from __future__ import annotations

import json
from typing import Any

from .base import CallStatus, Payload, StopReason
from .gate import (
    CheckPayload,
    CheckStarted,
    Drift,
    Escalation,
    LessonsPayload,
    Parked,
    PlanCommitted,
    PolishPayload,
    Rollback,
    TouchedProtected,
    VerificationPayload,
)
from .person_hooks import HookRan
from .tools import Delegated, Rewound, ToolCallPayload, ToolResultPayload, UndoPayload
from .turn import (
    BudgetNotice,
    Compacted,
    ErrorPayload,
    GuardTripped,
    NoticePayload,
    ReminderPayload,
    SessionResumed,
    StackProgress,
    TurnEnded,
)

Line = tuple[str, str]

#: The polish reason when there is no gate at all: said on the wire, not worth a line each turn.
POLISH_NO_GATE = "no done gate in use"

#: What a call's status reads as, on its card and in the headless transcript.
STATUS_LABELS: dict[CallStatus, str] = {
    CallStatus.QUEUED: "queued",
    CallStatus.WAITING: "waiting for approval",
    CallStatus.RUNNING: "running",
    CallStatus.DONE: "done",
    CallStatus.FAILED: "failed",
    CallStatus.DENIED: "denied",
    CallStatus.GUARDED: "not run: the repeat guard stopped it",
}


def summarize_arguments(name: str, arguments: dict[str, Any], width: int = 80) -> str:
    """The one thing a person needs to recognise the call: the command, else the path."""
    if isinstance(arguments.get("steps"), list):
        return f"{len(arguments['steps'])} steps"
    if "step_id" in arguments:
        return f"step {arguments['step_id']} → {arguments.get('status', '?')}"
    for key in ("command", "cmd", "path", "file", "pattern", "query"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            text = value
            break
    else:
        text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def result_status(p: ToolResultPayload) -> CallStatus:
    """A call that ran and returned not-ok is failed, whatever the loop filed it as."""
    return CallStatus.FAILED if p.status == CallStatus.DONE and not p.ok else p.status


def call_line(p: ToolCallPayload) -> Line:
    """A card's head, as one line (headless has no cards)."""
    who = "you ran " if p.via == "person" else ""
    name = " ".join(p.name.split())
    return f"{who}{name}  {summarize_arguments(p.name, p.arguments)}", "info"


def result_line(p: ToolResultPayload) -> Line:
    status = result_status(p)
    first = p.output.strip().splitlines()[:1]
    text = f"  · {STATUS_LABELS[status]}" + (f": {first[0][:160]}" if first else "")
    level = {CallStatus.DONE: "info", CallStatus.FAILED: "error"}.get(status, "warning")
    return text, level


def turn_ended_line(p: TurnEnded, said: str = "") -> Line | None:
    """`said`: the error already on screen. Each error is shown once: an HTTP 500 read twice, as
    "error: ..." and again as "turn ended: error — ..." with the same text, looked like two."""
    if p.reason == StopReason.COMPLETED:
        return None
    level = (
        "warning"
        if p.reason in (StopReason.INTERRUPTED, StopReason.STOPPED, StopReason.BLOCKED)
        else "error"
    )
    if p.message and p.message == said:
        return f"turn ended: {p.reason} (the error above)", level
    return f"turn ended: {p.reason}" + (f" — {p.message}" if p.message else ""), level


def compacted_line(p: Compacted) -> Line:
    """The figures, so a compaction is never silent (peers' users complain of exactly that)."""
    of = f" of {p.n_ctx:,}" if p.n_ctx else ""
    if p.reason == "guard_stop":  # loop/stop_notes.py: not the window filling up
        return (
            f"the {p.dropped_rounds} stopped rounds are one harness note for the model now "
            f"({p.tokens_before:,} → {p.tokens_after:,} tokens{of}; the log keeps them)",
            "info",
        )
    how = {
        "model": "a summary the model wrote",
        "brief": "the resume brief (no model summary)",
        "none": "placeholders for old tool outputs",
    }[p.summary_source]
    parts = [f"{p.dropped_rounds} rounds folded into {how}"] if p.dropped_rounds else [how]
    if p.pruned:
        parts.append(f"{p.pruned} old calls and results cleared")
    by = " (you asked)" if p.reason == "person" else ""
    return (
        f"context compacted{by}: {p.tokens_before:,} → {p.tokens_after:,} tokens{of}; "
        + "; ".join(parts),
        "info",
    )


def budget_line(p: BudgetNotice) -> Line:
    of = f" ({p.context_tokens:,} of {p.n_ctx:,} tokens)" if p.n_ctx else ""
    return f"context {p.percent}% full{of}", "warning" if p.percent >= 90 else "info"


def reminder_line(p: ReminderPayload) -> Line:
    """One line: the model reads the whole text; the person sees that it was told, and by whom."""
    body = [ln for ln in p.text.splitlines()[1:] if ln.strip()]
    first = body[0] if body else ""
    first = first if len(first) <= 100 else first[:99] + "…"
    more = f" (+{len(body) - 1} lines)" if len(body) > 1 else ""
    who = ", ".join(p.sources) or "harness"
    return f"reminder to the model ({who}): {first}{more}", "info"


def polish_line(p: PolishPayload) -> Line | None:
    if p.result == "skipped" and p.reason == POLISH_NO_GATE:  # no gate, no polish: every turn
        return None
    text = {
        "kept": "polish kept: the gate stayed green",
        "reverted": "polish reverted: the gate went red, the green result stands",
        "skipped": "polish skipped",
    }[p.result]
    level = "warning" if p.result == "reverted" else "info"
    return text + (f" ({p.reason})" if p.reason else ""), level


#: The failing tests a chat line names; the rest are counted.
NAMED_FAILING = 5


def check_started_line(p: CheckStarted) -> Line:
    when = "before the turn" if p.precheck else "the turn's result"
    return f"checking {when}: {p.command or 'the done check'} (Esc Esc stops it)", "info"


def check_line(p: CheckPayload) -> Line | None:
    """A check's result, red as loudly as green (issue 33: a red precheck said nothing at all,
    and a suite broken at collection only "checks stale"). A check reused because nothing
    changed since the last one at the turn's end is no news: nothing."""
    if p.reused and not p.precheck:
        return None
    took = f" in {p.took_s:.1f} s" if p.took_s else ""
    again = " (the tree is unchanged since it last ran: not run again)" if p.reused else ""
    if p.state == "interrupted":
        return f"check stopped: {p.command} did not finish, no result", "warning"
    if p.state == "passed":
        return f"check passed ✓{took}: {p.command}{again}", "success"
    if p.state == "failed":
        if p.cause:
            return f"check failed ✗{took}: {p.cause}{again}", "error"
        named = p.failing[:NAMED_FAILING]
        count = max(p.failed, len(p.failing))
        more = count - len(named)
        names = ", ".join(named) + (f" and {more} more" if more > 0 and named else "")
        what = f"{count} failing" + (f": {names}" if names else "")
        if not count:  # a red check whose output names no test: the criteria that failed
            what = "unmet: " + ", ".join(p.unmet)
        return f"check failed ✗{took}: {what}{again}", "error"
    if p.state == "unavailable":
        why = f" ({p.cause})" if p.cause else ""  # issue 33: "cannot run: No module named pytest"
        return f"check could not run: {p.command or ', '.join(p.states)}{why}", "warning"
    return None


def describe_undo(restored: list[str], removed: list[str], not_restorable: list[str]) -> str:
    """The person's line for an undo. A file the turn created is deleted by undoing it, and
    "undo: restored hello.py" for that sent the person looking for a hello.py that was gone."""
    gone = set(removed)
    back = [p for p in restored if p not in gone]
    deleted = [p for p in restored if p in gone]
    parts = [f"restored {', '.join(back)}"] if back else []
    if deleted:
        it = "it did not" if len(deleted) == 1 else "they did not"
        parts.append(f"removed {', '.join(deleted)} ({it} exist before)")
    text = "undo: " + ("; ".join(parts) or "nothing was put back")
    if not_restorable:
        text += f"; NOT restorable (changed by a command or outside): {', '.join(not_restorable)}"
    return text


def progress_text(stage: Any, fraction: Any, line: Any) -> str:
    if stage == "disconnected":  # not "starting": nothing is, until the server answers
        return f"disconnected: {line or ''}".rstrip()
    pct = f" {float(fraction):.0%}" if isinstance(fraction, int | float) else ""
    return f"starting: {stage or ''}{pct} {line or ''}".rstrip()


def _warning(name: str, text: str) -> Line:
    """A gate warning: its own words when they already name it ("parked: …"), else named."""
    text = text.strip()
    return (text if text.startswith(name + ":") else f"{name}: {text}".rstrip(": ")), "warning"


def rewound_line(p: Rewound) -> Line:
    """`rewind to turn 2 (both): restored a.py; removed b/c.txt; history cut by 6 messages`."""
    what = "forward" if p.forward else f"rewind to {p.to or f'turn {p.turn}'}"
    parts = [f"{what} ({p.mode})"]
    if p.restored:
        parts.append("restored " + ", ".join(p.restored[:10]))
    if p.removed:
        parts.append("removed " + ", ".join(p.removed[:10]))
    if p.messages_dropped:
        parts.append(f"history cut by {p.messages_dropped} messages")
    if p.kept:
        parts.append("kept as you left them: " + ", ".join(p.kept[:10]))
    if p.outside:
        parts.append("your changes overwritten (forward brings them back): " + ", ".join(p.outside))
    if p.refused:
        parts.append("NOT put back (a link or folder in the way): " + ", ".join(p.refused[:10]))
    return "; ".join(parts), "warning" if p.refused or p.outside else "info"


def hook_line(p: HookRan) -> Line | None:
    """Quiet: a hook that went on says nothing; one that blocked or failed says so once."""
    if p.outcome == "ok":
        return None
    on = f" on {p.tool}" if p.tool else ""
    what = {
        "blocked": "blocked",
        "error": f"failed (exit {p.exit})",
        "timeout": "killed at its timeout",
        "stopped": "stopped",
    }[p.outcome]
    first = (p.message.strip().splitlines() or [""])[0][:160]
    text = f"hook {p.name} ({p.event}{on}) {what}" + (f": {first}" if first else "")
    return text, "warning" if p.outcome in ("blocked", "stopped") else "error"


def describe(p: Payload, said: str = "") -> Line | None:
    """The chat's line for an event that is not a widget of its own. `said`: the turn's last error
    on screen (see turn_ended_line)."""
    match p:
        case NoticePayload():
            return p.text, p.level
        case ErrorPayload():
            return f"error: {p.message}" + (" (retrying)" if p.retrying else ""), "error"
        case GuardTripped(guard="repetition"):
            return None  # its notice ("reply cut: ...") says it: one cut, one line (issue 37)
        case GuardTripped():
            return f"guard {p.guard}: {p.reason}", "warning"
        case TurnEnded():
            return turn_ended_line(p, said)
        case HookRan():
            return hook_line(p)
        case Compacted():
            return compacted_line(p)
        case BudgetNotice():
            return budget_line(p)
        case ReminderPayload():
            return reminder_line(p)
        case PolishPayload():
            return polish_line(p)
        case Drift():
            return f"drift: {p.path} is outside step {p.step_id or '?'}'s declared files", "warning"
        case PlanCommitted():
            src = " (translated from a plan written to a file)" if p.source == "file" else ""
            return f"plan committed: {len(p.steps)} steps{src}", "info"
        case CheckStarted():
            return check_started_line(p)
        case CheckPayload():
            return check_line(p)
        case VerificationPayload():
            if p.state in ("", "clean"):
                return None  # nothing changed, nothing to say
            unmet = ", ".join(p.unmet)
            level = {"passed": "success", "failed": "error"}.get(p.state, "warning")
            return f"verification: {p.state}" + (f" (unmet: {unmet})" if unmet else ""), level
        case UndoPayload():
            text = describe_undo(p.restored, p.removed, p.not_restorable)
            return text, "warning" if p.not_restorable else "info"
        case Rewound():
            return rewound_line(p)
        case Delegated():
            if p.state == "started":
                return f"explore: {p.task}", "info"
            return f"explore finished ({p.reason}): read {', '.join(p.read) or 'nothing'}", "info"
        case LessonsPayload():
            learnt = "; ".join(x.text for x in p.stored)
            return f"lessons learnt this turn: {len(p.stored)}" + (
                f" ({learnt})" if learnt else ""
            ), "info"
        case SessionResumed():
            return f"resumed session {p.session_id}: {p.turns} turns", "info"
        case StackProgress():
            return progress_text(p.stage, p.fraction, p.line), "info"
        case TouchedProtected():
            return _warning("touched protected", p.text or ", ".join(p.paths))
        case Escalation():
            return _warning("escalation", p.text or p.rung)
        case Parked():
            return _warning("parked", p.text or p.path)
        case Rollback():
            return _warning("rollback", p.text or ", ".join(p.paths))
    return None
