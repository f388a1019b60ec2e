"""The resume brief (the seed's buildResumeBrief): what a model that lost the compacted rounds
cannot recover by reading the workspace.

A bare "N rounds were removed" marker is a hint, not a briefing: a model that lost the goal cannot
re-derive it from a file listing. So the brief carries the request verbatim, the plan with each
step's status as reconciled with the files on disk, decisions, what failed, the unmet criteria and
the files written. With nothing known a section says "(none)": an empty section, never a confident
invention. Pure: the caller gathers the facts (loop/model_call.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..hooks import BriefLine, BriefSection

NONE = "(none)"
#: Bounds, so a brief stays a page on a 4k window: the newest items are the ones that matter.
MAX_ITEMS = 20
MAX_ITEM_CHARS = 300
MAX_PATHS = 40


@dataclass(frozen=True)
class BriefFacts:
    request: str = ""
    plan: Sequence[str] = ()  # one line per step, its reconciled status in the line
    decisions: Sequence[str] = ()
    failed: Sequence[str] = ()  # failed calls, breaker shapes, denied approvals
    unmet: Sequence[str] = ()  # done criteria still unmet
    written: Sequence[str] = ()  # workspace-relative paths
    notes: Sequence[str] = field(default_factory=tuple)  # other mechanisms' lines


def file_lines(lines: Iterable[BriefLine | str]) -> dict[BriefSection, list[str]]:
    """The hooks' lines by the section each names (a field, never the line's wording). A plain
    string, from a hook that does not say, is a note: filed where it says nothing false."""
    out: dict[BriefSection, list[str]] = {s: [] for s in BriefSection}
    for line in lines:
        if isinstance(line, BriefLine):
            out[line.section].append(line.text)
        elif isinstance(line, str) and line.strip():
            out[BriefSection.NOTE].append(line)
    return out


def build_resume_brief(facts: BriefFacts) -> str:
    sections = [
        ("The person's request, verbatim:", [facts.request] if facts.request.strip() else [], 1),
        ("Plan (each step's status checked against the files on disk):", facts.plan, 0),
        ("Decisions:", facts.decisions, MAX_ITEMS),
        ("What already failed (do not repeat it blindly):", facts.failed, MAX_ITEMS),
        ("Done criteria still unmet:", facts.unmet, MAX_ITEMS),
        ("Files written this session:", _paths(facts.written), 0),
    ]
    out: list[str] = []
    for title, items, cap in sections:
        out.append(title)
        out.extend(_items(items, cap) if items else [NONE])
        out.append("")
    if facts.notes:
        out.append("Other notes:")
        out.extend(_items(facts.notes, MAX_ITEMS))
    return "\n".join(out).rstrip()


def _items(items: Sequence[str], cap: int) -> list[str]:
    """cap 1: the text as is (the request is verbatim, never cut); 0: every item, joined short;
    else the newest `cap` items as bullets, each cut at MAX_ITEM_CHARS."""
    if cap == 1:
        return [items[0]]
    if cap == 0:
        return list(items)
    shown = list(items)[-cap:]
    more = len(items) - len(shown)
    lines = [f"- {_cut(s)}" for s in shown]
    return ([f"- ({more} older not shown)"] if more else []) + lines


def _paths(paths: Sequence[str]) -> list[str]:
    if not paths:
        return []
    shown = ", ".join(paths[:MAX_PATHS])
    more = len(paths) - MAX_PATHS
    return [shown + (f" (and {more} more)" if more > 0 else "")]


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_ITEM_CHARS else flat[:MAX_ITEM_CHARS] + "…"
