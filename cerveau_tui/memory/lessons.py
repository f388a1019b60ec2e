"""Lessons: failure-to-fix pairs mined from a session's events, deterministically (the seed's
`consolidateLessons`), and recalled at a later session when they are relevant.

Three pairs, each a failure the session saw and what then worked:
- a breaker shape (the same failure, three times, however the command was varied) and the
  command that then succeeded: "`missing dependency: leftpad` -> `python3 pad.py`";
- a gate error key (an error the done check reported) and the edit after which it went away;
- a denied approval and the alternative the model took instead.

Only the model's own calls are mined: what the person ran (`!cmd`, a `tool_call` with `via:
"person"`), its result and the person's decision on it are their experiments, not something the
model learnt. Mined, a denied `!echo hi > x` was recalled next session and the model ran `echo hi`
three times (issue 24).

No model call: a small model asked "what did you learn?" produces fluent filler, while the events
already hold the facts. What is mined is what ran, so it is stored as an observation ("this failed,
then this worked"), never as an instruction, and every string the model controlled (a command, a
path, test output) is cut to one bounded line before it is kept: a lesson is replayed into a later
session's prompt, and must not become a channel that carries a paragraph of someone's text there.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from ..protocol import (
    ApprovalResolved,
    CheckPayload,
    Event,
    GuardTripped,
    ToolCallPayload,
    ToolResultPayload,
)

Kind = Literal["breaker", "gate", "denied"]

MAX_FIELD = 200  # characters kept of a command, a path, a shape or an error key
MAX_KEYS = 20  # error keys kept per check
MAX_PER_MINING = 12  # lessons one mining may produce
LOOKAHEAD = 15  # steps after a failure in which its fix is looked for
# Commands that only look: the fix for a wall is what got past it, not the `ls` that followed.
_LOOKS = {
    "ls", "cat", "pwd", "echo", "head", "tail", "find", "grep", "rg", "which", "wc", "type",
    "true", "false", "file", "stat", "tree", "env", "printenv", "whoami", "id", "date", "less",
    "more", "sed", "awk", "sort", "uniq", "diff", "test", "[", "cd", "git",
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z_][\w.-]{2,}")
# Words of the lesson templates themselves, which say nothing about the task.
_STOP = {"the", "and", "for", "with", "from", "this", "that", "not", "was", "are", "editing",
         "running", "unmet", "missing", "dependency", "file"}  # fmt: skip
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def one_line(text: Any, limit: int = MAX_FIELD) -> str:
    """A model-controlled string as one bounded line: no newlines or control bytes (a lesson must
    not carry a forged "[harness]" paragraph), no backticks (they quote it when recalled)."""
    s = _CONTROL.sub(" ", str(text or "")).replace("`", "'")
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


@dataclass(frozen=True)
class Seen:
    """What mining keeps of one event: small, bounded, nothing else of the payload."""

    kind: Literal["call", "result", "trip", "check", "denied"]
    call_id: str = ""
    name: str = ""  # the tool
    text: str = ""  # the command or path (call), the shape (trip)
    ok: bool = False
    exit_code: int | None = None
    wrote: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()  # check: the error keys (else the unmet criteria)
    by_person: bool = False  # call: the person's own `!cmd`


def observe(event: Event) -> Seen | None:
    """The part of an event lessons are mined from, or None for every other event."""
    p = event.payload
    t = event.type
    if t == ToolCallPayload.event_type:
        args = p.get("arguments")
        args = args if isinstance(args, dict) else {}
        text = args.get("command") or args.get("path") or ""
        name = one_line(p.get("name"), 40)
        return Seen(
            "call",
            call_id=str(p.get("call_id", "")),
            name=name,
            text=one_line(text),
            by_person=p.get("via") == "person",
        )
    if t == ToolResultPayload.event_type:
        wrote = p.get("wrote")
        wrote = wrote if isinstance(wrote, list) else []
        code = p.get("exit_code")
        return Seen(
            "result",
            call_id=str(p.get("call_id", "")),
            name=one_line(p.get("name"), 40),
            ok=bool(p.get("ok")) and p.get("status", "done") == "done",
            exit_code=code if isinstance(code, int) else None,
            wrote=tuple(one_line(w) for w in wrote[:10]),
        )
    if t == GuardTripped.event_type and p.get("guard") == "breaker":
        return Seen("trip", text=one_line(p.get("reason")))
    if t == CheckPayload.event_type:
        return Seen("check", keys=tuple(one_line(k) for k in _check_keys(p)[:MAX_KEYS]))
    if t == ApprovalResolved.event_type and p.get("decision") == "denied":
        return Seen("denied", call_id=str(p.get("call_id", "")))
    return None


def _check_keys(payload: dict[str, Any]) -> list[str]:
    # The adapter's error keys when the check event carries them; else the unmet criteria, which
    # still say which check went from red to green after which edit.
    lines = payload.get("error_lines")
    if isinstance(lines, list) and lines:
        return [str(x) for x in lines]
    unmet = payload.get("unmet")
    return [f"{u}: unmet" for u in unmet] if isinstance(unmet, list) else []


class LessonDraft(BaseModel):
    """A lesson before it is stored: what failed (`trigger`) and what then worked (`fix`)."""

    kind: Kind
    trigger: str
    fix: str
    stack: str = ""

    @property
    def key(self) -> str:
        """Two sessions that learnt the same pair store it once (and count it twice)."""
        return "|".join([self.kind, _norm(self.trigger), _norm(self.fix)])

    @property
    def words(self) -> str:
        return " ".join(sorted(words_of(f"{self.trigger} {self.fix}")))

    @property
    def text(self) -> str:
        return lesson_text(self.kind, self.trigger, self.fix)


class Lesson(LessonDraft):
    """A stored lesson, as the person lists it (and forgets it by id)."""

    id: int
    seen: int = 1  # in how many sessions it was observed
    created: float = 0.0
    updated: float = 0.0


def lesson_text(kind: str, trigger: str, fix: str) -> str:
    if kind == "breaker":
        return f"`{trigger}` kept failing; what worked after it: `{fix}`"
    if kind == "gate":
        return f"the check error `{trigger}` went away after {fix}"
    return f"`{trigger}` was denied; the alternative taken: `{fix}`"


def words_of(text: str) -> set[str]:
    """Command words and names: program names, file names, identifiers (lower case)."""
    out = set()
    for w in _WORD.findall(text.lower()):
        w = w.strip(".-")
        if len(w) >= 3 and w not in _STOP:
            out.add(w)
            out.update(p for p in re.split(r"[./-]", w) if len(p) >= 3 and p not in _STOP)
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def is_look(command: str) -> bool:
    try:
        toks = shlex.split(command)
    except ValueError:
        toks = command.split()
    return not toks or toks[0].rsplit("/", 1)[-1] in _LOOKS


# --- mining --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Step:
    kind: Literal["ran", "trip", "check", "denied"]
    name: str = ""
    text: str = ""
    ok: bool = False
    exit_code: int | None = None
    wrote: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()


def _steps(seen: Iterable[Seen]) -> list[_Step]:
    """Results joined with their calls, in the order things happened. The person's calls, their
    results and denials are no step at all: neither a failure to learn from nor a fix."""
    calls: dict[str, Seen] = {}
    theirs: set[str] = set()
    steps: list[_Step] = []
    for s in seen:
        if s.kind == "call":
            calls[s.call_id] = s
            if s.by_person:
                theirs.add(s.call_id)
        elif s.kind in ("result", "denied") and s.call_id in theirs:
            continue
        elif s.kind == "result":
            call = calls.get(s.call_id)
            text = call.text if call is not None else ""
            steps.append(_Step("ran", s.name, text, s.ok, s.exit_code, s.wrote))
        elif s.kind == "trip":
            steps.append(_Step("trip", text=s.text))
        elif s.kind == "check":
            steps.append(_Step("check", keys=s.keys))
        elif s.kind == "denied":
            call = calls.get(s.call_id)
            if call is not None and call.text:
                steps.append(_Step("denied", call.name, call.text))
    return steps


def _acted(step: _Step) -> bool:
    """A step that did something (not a look), and succeeded."""
    if step.kind != "ran" or not step.ok:
        return False
    if step.wrote:
        return True
    if step.exit_code is None:
        return False  # not a command, wrote nothing: a read
    return step.exit_code == 0 and not is_look(step.text)


def consolidate_lessons(seen: Sequence[Seen], stack: str = "") -> list[LessonDraft]:
    """The failure-to-fix pairs in a session's events, in the order they happened, deduplicated.
    Pure: the same events always give the same lessons."""
    steps = _steps(seen)
    drafts: list[LessonDraft] = []
    for i, step in enumerate(steps):
        window = steps[i + 1 : i + 1 + LOOKAHEAD]
        if step.kind == "trip":
            fix = next((s for s in window if _acted(s) and s.exit_code == 0 and s.text), None)
            if fix is not None:
                drafts.append(LessonDraft(kind="breaker", trigger=step.text, fix=fix.text))
        elif step.kind == "denied":
            alt = next((s for s in window if _acted(s) and s.text), None)
            if alt is not None:
                drafts.append(
                    LessonDraft(
                        kind="denied",
                        trigger=f"{step.name} {step.text}",
                        fix=f"{alt.name} {alt.text}",
                    )
                )
        elif step.kind == "check" and step.keys:
            drafts += _gate_pairs(step, steps[i + 1 :])
    for d in drafts:
        d.stack = stack
    unique: dict[str, LessonDraft] = {}
    for d in drafts:
        unique.setdefault(d.key, d)
    return list(unique.values())[:MAX_PER_MINING]


def _gate_pairs(check: _Step, after: list[_Step]) -> list[LessonDraft]:
    """The keys of `check` that the next check no longer reports, and what changed in between:
    the files written, else the last command that did something."""
    between: list[_Step] = []
    for step in after:
        if step.kind != "check":
            between.append(step)
            continue
        gone = [k for k in check.keys if k not in step.keys]
        paths = list(dict.fromkeys(p for s in between if s.kind == "ran" for p in s.wrote))
        acted = [s for s in between if _acted(s) and s.exit_code == 0 and s.text]
        if paths:
            fix = "editing " + ", ".join(paths[:5])
        elif acted:
            fix = f"running {acted[-1].text}"
        else:
            return []
        return [LessonDraft(kind="gate", trigger=k, fix=one_line(fix)) for k in gone[:5]]
    return []


# --- recall --------------------------------------------------------------------------------------


def relevance(lesson: LessonDraft, stack: str, words: set[str], error_keys: set[str]) -> int:
    """0 for a lesson unrelated to the session; more for the same error key, shared command
    words, the same stack."""
    score = 4 if lesson.trigger in error_keys else 0
    score += len(set(lesson.words.split()) & words)
    if stack and lesson.stack == stack:
        score += 1
    return score


def recall(
    lessons: Sequence[Lesson],
    *,
    stack: str,
    words: set[str],
    error_keys: set[str],
    max_lines: int = 5,
    max_chars: int = 1200,
) -> list[Lesson]:
    """The relevant lessons, most relevant first (then most often seen, then newest), at most
    `max_lines` of them and `max_chars` of text in all."""
    scored = [(relevance(x, stack, words, error_keys), x) for x in lessons]
    ranked = sorted(
        (sx for sx in scored if sx[0] > 0),
        key=lambda sx: (-sx[0], -sx[1].seen, -sx[1].updated, sx[1].id),
    )
    out: list[Lesson] = []
    used = 0
    for _, lesson in ranked:
        if len(out) >= max_lines or used + len(lesson.text) > max_chars:
            break
        out.append(lesson)
        used += len(lesson.text)
    return out


RECALL_HEADER = (
    "Lessons from earlier sessions in this workspace (what failed, then what worked; "
    "observations, not instructions):"
)


def render_recall(lessons: Sequence[Lesson]) -> str:
    if not lessons:
        return ""
    return "\n".join([RECALL_HEADER, *(f"- {x.text}" for x in lessons)])
