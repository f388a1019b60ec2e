"""Plan-in-a-file translation: reading a Markdown plan the model wrote instead of calling commit_plan.

This is the model's stubbornest habit. Rather than fight it, a plan-shaped Markdown write becomes
a structured plan too, so the plan strip and the planner see it (and the chat says so).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from .models import PlanStep

_NUMBERED = re.compile(r"^(?P<indent>\s*)(?P<num>\d{1,3})[.)]\s+(?P<text>\S.*)$")
_CHECKBOX = re.compile(r"^(?P<indent>\s*)[-*+]\s+\[(?P<mark>[ xX])\]\s+(?P<text>\S.*)$")
_STEP_HEADING = re.compile(
    r"^#{1,6}\s+(?:step|phase|stage)\s+(?P<num>\d{1,3})\s*[:.)\-–—]?\s*(?P<text>.*)$", re.I
)
_HEADING = re.compile(r"^#{1,6}\s+(?P<text>.+)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BACKTICKED = re.compile(r"`([^`\n]+)`")
# A backticked token is a file when it has no spaces and looks like a path with an extension or a
# directory: `src/app.py`, `README.md`, `tests/`. Commands (`pytest -q`) and calls (`main()`) are not.
_FILEISH = re.compile(r"^(?:\.{0,2}/)?[\w.@+-]+(?:/[\w.@+-]+)*(?:\.[A-Za-z0-9]{1,8}|/)$")
_BARE_FILES = frozenset({"Makefile", "Dockerfile", "Justfile", "Procfile", "Gemfile", "LICENSE"})
_PLAN_NAME = re.compile(r"(plan|todo|tasks?|steps|roadmap|milestones?)", re.I)
_PLAN_HEADING = re.compile(r"\b(plan|steps|todo|to-do|tasks|roadmap|milestones)\b", re.I)

MIN_STEPS = 2
MAX_TITLE = 120


def files_in(text: str) -> list[str]:
    out: list[str] = []
    for tok in _BACKTICKED.findall(text):
        tok = tok.strip()
        fileish = tok.split("/")[-1] in _BARE_FILES or (
            _FILEISH.match(tok) and not tok.replace(".", "").isdigit()
        )
        if fileish and tok not in out:
            out.append(tok[2:] if tok.startswith("./") else tok)
    return out


def _title(text: str) -> str:
    t = re.sub(r"\*\*|__", "", text).strip()
    t = re.sub(r"\s+", " ", t)
    return t if len(t) <= MAX_TITLE else t[: MAX_TITLE - 1].rstrip() + "…"


def plan_from_markdown(text: str) -> list[PlanStep] | None:
    """Structured steps from a numbered list, a checkbox list, or `## Step N` headings; None when
    the text holds fewer than two.

    Only the outermost list counts as steps; lines indented under a step (sub-bullets, details)
    contribute the files they mention to that step. Lists inside code fences are ignored.
    """
    items: list[tuple[str, list[str]]] = []  # (title, detail lines)
    in_fence = False
    closed = False  # a heading after the list ended it; later text belongs to other sections
    base_indent: int | None = None
    by_heading = False  # "## Step N" sections: lists inside them are the step's details
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _STEP_HEADING.match(line)
        if m:
            if closed and len(items) < MIN_STEPS:
                items, base_indent = [], None
            closed, by_heading = False, True
            items.append((m.group("text") or f"Step {m.group('num')}", []))
            continue
        if _HEADING.match(line):
            closed = bool(items)
            continue
        m = None if by_heading else (_NUMBERED.match(line) or _CHECKBOX.match(line))
        if m:
            indent = len(m.group("indent").expandtabs(4))
            if closed:
                if len(items) >= MIN_STEPS:
                    break  # the first list of steps is the plan; later lists are notes
                items, base_indent, closed = [], None, False
            if base_indent is None or indent <= base_indent:
                base_indent = indent
                items.append((m.group("text"), []))
                continue
        if items and not closed and line.strip():
            items[-1][1].append(line)
    if len(items) < MIN_STEPS:
        return None
    steps: list[PlanStep] = []
    for i, (title, details) in enumerate(items):
        body = "\n".join(details)
        steps.append(
            PlanStep(id=str(i + 1), title=_title(title), files=files_in(title + "\n" + body))
        )
    return steps


def looks_like_plan_file(rel_path: str, text: str) -> bool:
    """Whether a Markdown write should be read as a plan at all.

    A README's numbered install instructions are a list of steps too; committing them as the
    session's plan would be wrong. So the file must be named like a plan (PLAN.md, TODO.md,
    docs/tasks.md), or carry a heading saying so, or use checkboxes (a task list by construction).
    """
    p = PurePosixPath(rel_path)
    if p.suffix.lower() not in (".md", ".markdown"):
        return False
    if _PLAN_NAME.search(p.stem):
        return True
    for line in text.splitlines():
        h = _HEADING.match(line)
        if h and _PLAN_HEADING.search(h.group("text")):
            return True
        if _CHECKBOX.match(line):
            return True
    return False
