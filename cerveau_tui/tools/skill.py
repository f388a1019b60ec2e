"""load_skill: the body of a skill the system prompt's index names, read into the context.

Registered only when the session has skills (a tool the model can call for nothing is a tool it
will call for nothing). The catalogue is handed in (`SkillBook`, reminders/skills.py), read once at
session creation: the tool touches no file, so it declares no path and needs no approval.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from .args import NonBlank
from .base import Tool, ToolContext, ToolError, ToolResult


class Skills(Protocol):
    def names(self) -> list[tuple[str, str]]: ...

    def body(self, name: str) -> str | None: ...


class LoadSkill(Tool):
    name = "load_skill"
    description = "Load the instructions of a skill listed under Skills in the system prompt."

    class Args(BaseModel):
        name: NonBlank = Field(description="the skill's name, as the index lists it")

    def __init__(self, skills: Skills) -> None:
        self.skills = skills

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        body = self.skills.body(args.name)
        if body is None:
            known = ", ".join(n for n, _ in self.skills.names()) or "none"
            raise ToolError(f"no skill named {args.name[:80]!r}; the skills are: {known}")
        return ToolResult(ok=True, output=f"[skill {args.name.strip()}]\n{body}")
