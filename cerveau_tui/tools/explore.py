"""explore: hand one question to a read-only child turn (`delegate`), and the child's tools."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from .args import NonBlank, PathArg
from .base import Tool, ToolContext, ToolError, ToolResult
from .registry import Registry

#: ToolResult.meta key of the child's token usage: the turn (loop/turn.py) adds it to its own, so
#: a child's tokens count against the parent's ceiling and usage.
CHILD_USAGE = "child_usage"


class Explore(Tool):
    name = "explore"
    description = "Ask a read-only helper to investigate one question in the workspace."

    class Args(BaseModel):
        task: NonBlank
        path: PathArg = "."

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        run = ctx.delegate
        if run is None:
            raise ToolError("explore is switched off in this session (the person's palette)")
        result = run(args.task, args.path)
        usage = getattr(result, "usage", None)
        return ToolResult(
            ok=result.reason == "completed",
            output=str(result),
            meta={CHILD_USAGE: usage} if usage is not None else {},
        )


class ChildRegistry(Registry):
    """A delegated child's tools: only `names` RUN (the others are absent, so the read-only lock
    stays structural: a write the child asks for is an unknown tool), while the schemas SENT are
    the parent's, byte for byte. The tools are rendered into the prompt's prefix; a child that
    sent three of them shared nothing past the system message's start with the parent's cached
    prompt and read its whole prefix again at each explore (issue 36). In constrained mode the
    grammar (outside the prompt) allows only the reading tools: `runnable_schemas`."""

    def __init__(self, parent: Registry, names: Iterable[str]) -> None:
        super().__init__(t for n in names if (t := parent.get(n)) is not None)
        self._parent = parent

    def schemas(self) -> list[dict[str, Any]]:
        return self._parent.schemas()

    def runnable_schemas(self) -> list[dict[str, Any]]:
        # What constrained mode's grammar allows (ModelCall's `narrow`): the reading tools only.
        return Registry.schemas(self)
