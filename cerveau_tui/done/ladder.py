"""The escalation ladder: what changes, one rung at a time, when the model is stalled.

Repeating the same report to a stalled model produces the same answer. Each rung changes one
thing about the situation instead: R1 makes it explain the failure before touching anything, R2
gives it more room to reason, R3 shrinks the problem to one file and one error, R4 asks a stronger
model (only when one is configured). When the ladder runs out the run parks with a handoff, so a
later session resumes from what was learned instead of restarting.

Structural where the seed implies it, because a message alone did not change what a small model
did: at R1 any call but a read is refused in the next round, so "diagnose before editing" is not
a request it can ignore; at R2 the server's own
reasoning switch is turned on when its chat template has one (`reasoning_switch`), else the
token cap is raised, and the model is told which; at R3 the round after it holds the file tools
to the one file named, and when no file can be named it is read-only, like R1's. R1's diagnosis,
given as an answer, is judged like any answer and counts as one of the rung's cycles: one cycle
to diagnose, another to fix, as the rung intends.

A rung refuses; it never changes the tools sent or the system message. Measured (issue 36): when
R1 offered only the read tools, each rung re-read the whole prompt (938, then 1,933, then 2,721
tokens for 0-783 appended), because native tools are rendered into the prompt's prefix
(loop/narrow.py). The refusal names what runs, and the rung's message says it in advance.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..state_home import locate, state_path
from ..workspace.io.beneath import atomic_write_beneath, read_bytes_beneath, unlink_beneath
from .criteria import Report

RUNGS: tuple[str, ...] = ("R1", "R2", "R3", "R4")
HANDOFF_FILE = Path(".cerveau") / "handoff.md"
HANDOFF_NAME = "handoff.md"  # in the workspace's state (state_home.locate): HANDOFF_FILE by default
#: R2's factor on the token cap: enough for a reasoning block plus the edit it leads to.
ROOM_FACTOR = 2


def next_rung(current: str | None, expert_configured: bool) -> str | None:
    """The rung after `current` (None: not escalated yet); None when the ladder has run out.

    R4 exists only with an expert configured: handing off to nobody is not a rung, and pretending
    otherwise would spend a stall cycle on a message that changes nothing.
    """
    order = list(RUNGS if expert_configured else RUNGS[:-1])
    if current is None:
        return order[0]
    if current not in order:
        return None
    i = order.index(current)
    return order[i + 1] if i + 1 < len(order) else None


#: What R1's round offers: look, never change. A diagnosis needs reading; an edit made before it
#: is the guess the rung exists to stop.
READ_ONLY_TOOLS: tuple[str, ...] = ("read_file", "list_files", "search")


def reasoning_switch(props: Any) -> tuple[dict[str, Any], str] | None:
    """The request fields that turn the model's reasoning on, read from the server's `/props`
    (a provider's ServerProps), and how to say it; None when the server shows no switch.

    Read, never assumed: `chat_template_kwargs` the template does not use are ignored, so sending
    them to a model without them would let R2 claim "reasoning on" while nothing changed. A
    template (or its caps) that names `enable_thinking` (Qwen3 and kin) gets it set; one that
    names `reasoning_effort` (gpt-oss) gets "high".
    """
    raw = getattr(props, "raw", None)
    caps = raw.get("chat_template_caps") if isinstance(raw, dict) else None
    caps = caps if isinstance(caps, dict) else {}
    template = getattr(props, "chat_template", None)
    template = template if isinstance(template, str) else ""
    if caps.get("supports_enable_thinking") is True or "enable_thinking" in template:
        kwargs: dict[str, Any] = {"enable_thinking": True}
        return {
            "chat_template_kwargs": kwargs
        }, "reasoning on (chat_template_kwargs.enable_thinking)"
    if caps.get("supports_reasoning_effort") is True or "reasoning_effort" in template:
        kwargs = {"reasoning_effort": "high"}
        return {
            "chat_template_kwargs": kwargs
        }, "reasoning on (chat_template_kwargs.reasoning_effort=high)"
    return None


#: The file tools whose `path` R3's round holds to its one file (bash cannot be read that way;
#: the check after the round says what it changed).
FILE_WRITERS: tuple[str, ...] = ("write_file", "edit_file")


def rung_refusal(
    read_only_round: int | None,
    narrow: tuple[int, str] | None,
    iteration: int,
    tool: str,
    arguments: dict[str, Any],
    rung: str | None = "R1",
) -> str | None:
    """Why a call is refused in the round after R1 or R3; None when it may run.

    R1 (and R3 when no file can be named): any call but a read. The request offers every tool
    (the prompt's prefix is kept, loop/narrow.py), so this refusal is the lock; constrained
    mode's grammar narrows too. R3 with a file named: a file tool writing another file
    than that one. Only that round: once the named error is fixed the next one may live
    elsewhere, and a lock that outlived it would block it. `rung`: the one that set the round.
    """
    if read_only_round == iteration and tool not in READ_ONLY_TOOLS:
        why = (
            "escalation R3: no single file can be named, find it first"
            if rung == "R3"
            else "escalation R1: diagnose before editing"
        )
        return (
            f"refused: this round is read-only ({why}); only "
            f"{', '.join(READ_ONLY_TOOLS)} run now. State your diagnosis; editing comes back in "
            "the next round."
        )
    if narrow is None or narrow[0] != iteration or tool not in FILE_WRITERS:
        return None
    raw = arguments.get("path")
    path = raw.strip().removeprefix("./") if isinstance(raw, str) else ""
    if path == narrow[1]:
        return None
    return (
        f"refused: escalation R3 narrowed this round to one file, `{narrow[1]}`; "
        f"`{path or '(no path)'}` is not it. Fix the one error there, then stop calling tools."
    )


def rung_max_tokens(rung: str, current: int) -> int | None:
    """The larger token cap R2 gives; None for every other rung. Only R2 changes it: the engine
    keeps a raised cap for the rest of the turn, so raising it again at R3 would compound."""
    return current * ROOM_FACTOR if rung == "R2" else None


def steer_message(
    rung: str,
    report: Report,
    errors: Sequence[tuple[str, int]],
    focus_file: str | None,
    expert_advice: str | None = None,
    room: str | None = None,
) -> str:
    """What the model is told at `rung`. `errors` are (error, age in cycles), oldest first;
    `room` is what R2 changed (reasoning on, or the larger cap), said as it is."""
    head = f"Escalation {rung}: the done criteria are still unmet and the last cycles made no progress."
    listing = (
        "\n".join(f"- {e} (seen {a} cycle(s) in a row)" for e, a in errors[:8])
        or "- (no parseable error lines)"
    )
    body: str
    if rung == "R1":
        body = (
            "Do NOT edit anything yet. First diagnose your own failure: in this round only the "
            f"read tools run ({', '.join(READ_ONLY_TOOLS)}); any other call is refused. Read the "
            "output below and what you "
            "need, then state, in two or three sentences, why the check still fails and what "
            "exactly you will change. Editing comes back in the round after that diagnosis: then "
            "make that one change."
        )
    elif rung == "R2":
        said = room or "the token cap for your replies is larger"
        body = (
            f"You now have more room: {said}. Reason step by step through the failure in full "
            "(what the check expects, what the code does, where they differ) before you call "
            "any tool."
        )
    elif rung == "R3":
        target = errors[0][0] if errors else (report.unmet() or ["the check"])[0]
        if focus_file:
            body = (
                f"Narrow the work: change only the file `{focus_file}`, and fix only this one "
                f"error: `{target}`. Ignore every other failure for now. Make one small edit, "
                "then stop calling tools so the check runs again."
            )
        else:
            body = (
                f"Narrow the work to this one error: `{target}`. No single file can be named from "
                "the failing output, so this round is read-only "
                f"({', '.join(READ_ONLY_TOOLS)}): find the one file that causes it and say which, "
                "and what one change you will make there. Editing comes back in the next round: "
                "then make that one small edit, in that one file."
            )
    elif rung == "R4":
        advice = (expert_advice or "").strip() or "(the expert gave no advice)"
        body = (
            "An expert model was consulted on this failure. Its advice follows; apply it, "
            f"checking each step against the output.\n--- expert advice ---\n{advice}"
        )
    else:
        raise ValueError(f"unknown rung {rung!r}")
    return f"{head}\n{body}\nErrors:\n{listing}\n{report.detail(2000)}"


def build_handoff(
    task: str,
    report: Report,
    rungs_tried: Sequence[str],
    errors: Sequence[tuple[str, int]],
    written: Sequence[str],
    tried: Sequence[str],
) -> str:
    """The parked run's handoff: what was tried, what is unmet, where things stand.

    Written for the next session's first turn as much as for a person: it says what NOT to repeat,
    which is the difference between resuming and restarting.
    """
    lines = [
        "# Handoff: this run parked after the escalation ladder ran out",
        "",
        "## Task",
        task.strip() or "(no task text)",
        "",
        "## What is unmet",
        *([f"- {n}" for n in report.unmet()] or ["- (nothing)"]),
        "",
        "## Where things stand",
        str(report),
        "",
        "## Errors still present (age = consecutive checks it survived)",
        *([f"- {e} (age {a})" for e, a in errors[:20]] or ["- (no parseable error lines)"]),
        "",
        "## What was tried",
        f"- escalation rungs: {', '.join(rungs_tried) or 'none'}",
        f"- files written: {', '.join(written) or 'none'}",
        *[f"- {t}" for t in tried[-15:]],
        "",
        "## To resume",
        "Start from the unmet criteria and the oldest error above. The approaches listed under "
        "'What was tried' did not make the check pass; do not repeat them unchanged.",
    ]
    return "\n".join(lines) + "\n"


def write_handoff(workspace: Path, text: str) -> Path:
    # Beneath the workspace, no link followed: `.cerveau/` planted as a link (a backend that
    # cannot make it read-only) must not send the person's write elsewhere.
    atomic_write_beneath(*locate(workspace, HANDOFF_NAME), text.encode("utf-8"))
    return state_path(workspace, HANDOFF_NAME)


def load_handoff(workspace: Path) -> str | None:
    """The handoff a parked run left, for the next session's first turn; None when there is none."""
    try:
        text = read_bytes_beneath(*locate(workspace, HANDOFF_NAME), 1_000_000).decode(
            "utf-8", "replace"
        )
    except OSError:
        return None
    return text if text.strip() else None


def clear_handoff(workspace: Path) -> bool:
    """Remove the handoff once the gate passes: a resolved handoff steering a later session would
    send it after a problem that no longer exists."""
    try:
        return unlink_beneath(*locate(workspace, HANDOFF_NAME), missing_ok=False)
    except OSError:
        return False
