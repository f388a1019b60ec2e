"""Skills (the seed's Skills): instructions for one kind of task, indexed in the prefix, loaded on
trigger.

A skill is a Markdown file with front matter:

    ---
    name: release
    description: how to cut a release of this project
    ---
    (the body: what to do, step by step)

from the person's config dir (`skills/`) and the workspace's `.cerveau/skills/` (read beneath it,
no link followed); a workspace skill replaces a user skill of the same name (the project knows its
own release better). Only the index (name and one line each) sits in the system prompt, bounded
for a 4k window: twenty skills of full bodies would not fit it, twenty lines do. The body comes in
when needed: the model calls `load_skill`, or the person picks one from the palette.

A malformed file is skipped with a warning the person sees; it never stops the session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from .. import protocol as P
from ..hooks import Hook, TurnContext
from ..state_home import locate
from ..workspace.io.beneath import UnsafePath, open_dir_beneath
from .reading import Head, read_head, read_head_beneath

#: At most this many skills in the index: each line costs ~30 tokens of every request.
MAX_INDEXED = 20
MAX_DESCRIPTION = 100  # characters of a description in the index
MAX_INDEX_CHARS = 1600  # the whole index, whatever the files say: ~450 tokens, a tenth of 4k
MAX_SKILL_BYTES = 64 * 1024  # a file larger than this is not a skill, it is a manual
MAX_FILES = 100  # files looked at per folder
WORKSPACE_DIR = ".cerveau/skills"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class MalformedSkill(ValueError):
    pass


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    source: str  # where it came from, for the person


def parse_skill(text: str, source: str) -> Skill:
    """One skill file's text; MalformedSkill says what is wrong, in words a person can act on."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        raise MalformedSkill(f"{source}: does not start with front matter (a line '---')")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise MalformedSkill(f"{source}: the front matter is not closed by a line '---'") from None
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip().strip("\"'")
    name, description = fields.get("name", ""), " ".join(fields.get("description", "").split())
    if not _NAME.fullmatch(name):
        raise MalformedSkill(
            f"{source}: name {name!r} is not a skill name (letters, digits, '-', '_', '.'; "
            f"at most 64)"
        )
    if not description:
        raise MalformedSkill(f"{source}: no description (one line saying when to use it)")
    body = "\n".join(lines[end + 1 :]).strip()
    if not body:
        raise MalformedSkill(f"{source}: the skill has no body after its front matter")
    return Skill(name, description, body, source)


@dataclass
class SkillBook:
    """The session's skills, read once at its creation."""

    skills: dict[str, Skill]
    warnings: list[str]
    cap: int = 8192  # bytes of a body loaded into the context (instructions_max_bytes)

    def index(self) -> str:
        if not self.skills:
            return ""
        lines = [
            "## Skills",
            "Instructions for particular tasks. When one fits what you are asked, call "
            "load_skill with its name first and follow it.",
        ]
        size = sum(len(x) for x in lines)
        names = sorted(self.skills)
        shown = 0
        for name in names[:MAX_INDEXED]:
            desc = self.skills[name].description
            if len(desc) > MAX_DESCRIPTION:
                desc = desc[: MAX_DESCRIPTION - 3].rstrip() + "..."
            line = f"- {name}: {desc}"
            if size + len(line) > MAX_INDEX_CHARS:
                break
            lines.append(line)
            size += len(line)
            shown += 1
        if shown < len(names):
            lines.append(f"({len(names) - shown} more; load_skill with any name lists them all)")
        return "\n".join(lines)

    def names(self) -> list[tuple[str, str]]:
        return [(n, self.skills[n].description) for n in sorted(self.skills)]

    def body(self, name: str) -> str | None:
        skill = self.skills.get(name.strip())
        if skill is None:
            return None
        data = skill.body.encode("utf-8")
        if len(data) <= self.cap:
            return skill.body
        cut = data[: self.cap].decode("utf-8", "ignore")
        return f"{cut}\n[skill {skill.name} is {len(data)} bytes; only the first {self.cap} shown]"


def _from_user(folder: Path, warnings: list[str]) -> list[Skill]:
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        warnings.append(f"{folder}: skills not read ({exc})")
        return []
    out: list[Skill] = []
    for name in [n for n in names if n.endswith(".md")][:MAX_FILES]:
        path = folder / name
        out += _one(partial(read_head, path, MAX_SKILL_BYTES + 1), str(path), warnings)
    return out


def _from_workspace(root: Path, warnings: list[str]) -> list[Skill]:
    base, rel = locate(root, "skills")  # `.cerveau/skills`, or the alternate's (state_home.py)
    try:
        fd = open_dir_beneath(base, rel)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except (UnsafePath, OSError) as exc:
        warnings.append(f"{rel}: skills not read ({exc})")
        return []
    try:
        names = sorted(os.listdir(fd))
        out: list[Skill] = []
        for name in [n for n in names if n.endswith(".md")][:MAX_FILES]:
            shown = f"{rel}/{name}"
            read = partial(read_head_beneath, base, shown, MAX_SKILL_BYTES + 1)
            out += _one(read, shown, warnings)
        return out
    finally:
        os.close(fd)


def _one(read: Callable[[], Head | None], shown: str, warnings: list[str]) -> list[Skill]:
    try:
        head: Head | None = read()
    except UnsafePath:
        warnings.append(f"skill {shown} is a symbolic link; skipped (links are not followed)")
        return []
    except OSError as exc:
        warnings.append(f"skill {shown} skipped: {exc}")
        return []
    if head is None:
        return []
    if head.size > MAX_SKILL_BYTES:
        warnings.append(f"skill {shown} skipped: {head.size} bytes (at most {MAX_SKILL_BYTES})")
        return []
    try:
        return [parse_skill(head.text, shown)]
    except MalformedSkill as exc:
        warnings.append(f"skill skipped: {exc}")
        return []


def load_skills(workspace: Path, user_dir: Path | None, cap: int = 8192) -> SkillBook:
    warnings: list[str] = []
    found: dict[str, Skill] = {}
    user = _from_user(user_dir / "skills", warnings) if user_dir is not None else []
    ws = _from_workspace(Path(os.path.realpath(workspace)), warnings)
    for skill in [*user, *ws]:  # the workspace's last: its skill of a name wins
        found[skill.name] = skill
    return SkillBook(found, warnings, cap)


class SkillsHook(Hook):
    """The index in the prefix; the warnings said to the person at the first turn."""

    name = "skills"

    def __init__(self, book: SkillBook) -> None:
        self.book = book
        self._warned = False

    def system_sections(self) -> list[str]:
        index = self.book.index()
        return [index] if index else []

    def on_turn_start(self, ctx: TurnContext, task: str) -> None:
        if not self._warned:
            self._warned = True
            for text in self.book.warnings:
                ctx.emit(P.NoticePayload(text=text, level="warning", source=self.name))
        return None
