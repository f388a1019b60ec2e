"""explore: hand one question to a read-only child turn (opt-in: `delegate = true`)."""

from __future__ import annotations

from pydantic import BaseModel

from .args import NonBlank, PathArg
from .base import Tool, ToolContext, ToolError, ToolResult

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
            raise ToolError("delegation is not available in this session")
        result = run(args.task, args.path)
        usage = getattr(result, "usage", None)
        return ToolResult(
            ok=result.reason == "completed",
            output=str(result),
            meta={CHILD_USAGE: usage} if usage is not None else {},
        )
