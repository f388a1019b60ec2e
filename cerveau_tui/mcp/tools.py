"""`mcp_describe` and `mcp_call`: the two fixed tools every MCP tool is reached through.

Fixed so the tool list, which llama-server renders into the cached prefix, never changes: a
server's schema comes in as `mcp_describe`'s RESULT (appended to the conversation, the cache
kept), and `mcp_call` carries `{"server", "tool", "arguments"}`, checked against the tool's
inputSchema by the harness before anything is sent (schema.py; in constrained mode the grammar
can only say "an object"). Registered only when a server started with tools (a tool the model
can call for nothing is a tool it will call for nothing).

`mcp_call` declares a ToolAction, so the policy judges it by server and tool (policy/actions.py)
and the dialog shows the server, the tool and the arguments (`preview`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from ..sandbox.process import cap_output
from ..text_safety import visible
from ..tools.args import NonBlank
from ..tools.base import Declared, RetryClass, Tool, ToolAction, ToolContext, ToolError, ToolResult
from .hub import McpHub, UnknownTool
from .wire import McpCancelled, McpError, McpTimeout


class McpDescribe(Tool):
    name = "mcp_describe"
    description = "Read an MCP tool's description and arguments (listed under MCP tools)."

    class Args(BaseModel):
        server: NonBlank = Field(description="the server, as the index names it")
        tool: NonBlank = Field(description="the tool's name on that server")

    def __init__(self, hub: McpHub) -> None:
        self.hub = hub

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        try:
            text = self.hub.describe(args.server.strip(), args.tool.strip())
        except UnknownTool as exc:
            raise ToolError(str(exc)) from exc
        # A schema is the server's to write: a 3 MB one must not fill the window.
        text, _ = cap_output(text, ctx.output_cap)
        return ToolResult(ok=True, output=text)


class McpCall(Tool):
    name = "mcp_call"
    description = "Call a tool of an MCP server with its arguments (see mcp_describe)."
    retry_class = RetryClass.TRANSIENT
    mutates = True  # unless marked read-only, a server may change the workspace it sees

    class Args(BaseModel):
        server: NonBlank
        tool: NonBlank
        arguments: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, hub: McpHub) -> None:
        self.hub = hub

    def declare(self, args: Args, ctx: ToolContext) -> Declared:  # type: ignore[override]
        server, tool = args.server.strip(), args.tool.strip()
        try:
            s, t = self.hub.tool(server, tool)
        except UnknownTool:
            return Declared()  # nothing is called: run() says what exists
        return Declared(
            action=ToolAction(
                summary=f"{s.name}/{t.name}",
                scopes=(
                    (f"mcp:{s.name}/{t.name}", f"MCP tool {s.name}/{t.name}"),
                    (f"mcp:{s.name}", f"every tool of MCP server {s.name}"),
                ),
                read_only=s.config.marks_read_only(t.name),
                remote=s.remote,
            )
        )

    def preview(self, args: Args, ctx: ToolContext) -> str | None:  # type: ignore[override]
        shown = json.dumps(args.arguments, ensure_ascii=False, indent=1)
        if len(shown) > 4000:
            shown = shown[:4000] + "\n... (cut)"
        return visible(f"server: {args.server}\ntool: {args.tool}\narguments: {shown}")

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        server, tool = args.server.strip(), args.tool.strip()
        try:
            problems = self.hub.check(server, tool, args.arguments)
        except UnknownTool as exc:
            raise ToolError(str(exc)) from exc
        if problems:
            raise ToolError(
                f"arguments do not fit {server}/{tool}'s schema (nothing was sent): "
                + "; ".join(problems)
                + f". mcp_describe {server} {tool} shows the schema"
            )
        try:
            out = self.hub.call(server, tool, args.arguments, ctx.output_cap, ctx.cancel)
        except McpCancelled as exc:
            return ToolResult(ok=False, output=f"[stopped: {exc}]")
        except McpTimeout as exc:
            raise ToolError(str(exc), RetryClass.TRANSIENT) from exc
        except (McpError, OSError) as exc:
            raise ToolError(f"{server}/{tool} failed: {exc}", RetryClass.TRANSIENT) from exc
        if not self.hub.read_only(server, tool):
            ctx.state.record_write(ctx.workspace)  # a stale verification seal is never "fresh"
        return ToolResult(
            ok=out.ok,
            output=out.text if out.ok else f"[the tool reported an error]\n{out.text}",
            error_class=None if out.ok else RetryClass.ARGS,
            meta={"truncated": out.truncated, "duration_ms": out.duration_ms},
        )
