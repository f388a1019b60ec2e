"""Reminder sources: hooks that say, before the next model call, what changed mid-session.

The channel is the loop's (loop/remind.py: one marked message after the history, never a prefix
change); these are the voices: the instruction chain (AGENTS.md), the skills index, files changed
on disk since the model read them, and the budget notice. `reminder_hooks` builds them from
Settings; the session wires them in one line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..config import Settings, user_config_path
from ..hooks import Hook
from ..workspace.fingerprint.fingerprinter import Fingerprinter
from .budget import BudgetHook
from .changed import ChangedOnDiskHook
from .instructions import InstructionsHook
from .skills import SkillBook, SkillsHook, load_skills

__all__ = ["reminder_hooks", "skill_book"]


def reminder_hooks(
    settings: Settings, fp: Fingerprinter, user_dir: Path | None = None
) -> list[Hook]:
    """`user_dir`: the person's config dir (default: where their config.toml lives)."""
    ctx = settings.context
    home: Path | None = user_dir if user_dir is not None else user_config_path().parent
    if home is not None and _within(home, settings.workspace):
        # CERVEAU_CONFIG pointing into the workspace (the test harness's does): its files would be
        # read as the person's own, links followed, and AGENTS.md twice. The workspace's alone.
        home = None
    hooks: list[Hook] = [InstructionsHook(settings.workspace, home, ctx.instructions_max_bytes)]
    if ctx.skills:
        book = load_skills(settings.workspace, home, ctx.instructions_max_bytes)
        if book.skills or book.warnings:
            hooks.append(SkillsHook(book))
    hooks.append(ChangedOnDiskHook(fp))
    if ctx.budget_notice:
        hooks.append(BudgetHook())
    return hooks


def _within(path: Path, root: Path) -> bool:
    p, r = os.path.realpath(path), os.path.realpath(root)
    return p == r or p.startswith(r.rstrip("/") + "/")


def skill_book(hooks: Sequence[Hook]) -> SkillBook | None:
    """The session's skills (what load_skill and the palette offer), or None without any."""
    for h in hooks:
        if isinstance(h, SkillsHook) and h.book.skills:
            return h.book
    return None
