"""The prefix's index of MCP tools: server, tool, one line each, under a budget, frozen.

A few servers' full schemas eat a 4k-8k window (mcp-server-git's twelve tools are ~3,000 tokens
of schema), and a schema loaded mid-session (Claude Code's tool search) rewrites the cached
prompt, which on a local server means reading the whole conversation again. So the prefix holds
names and one line each, the tool list is fixed (`mcp_describe`, `mcp_call`), and a schema
arrives as a tool RESULT: appended after the cached prefix, never inside it. Built once, from the
catalogue taken at session start; a server's later changes are not followed.
"""

from __future__ import annotations

from ..text_safety import visible
from .client import ToolInfo

#: Characters per token assumed for the budget (English prose and identifiers: ~4).
CHARS_PER_TOKEN = 4
LINE_CHARS = 100  # one tool's line, at most

HEADER = (
    "## MCP tools\n"
    "Tools of the person's MCP servers, as server/tool. Before the first use of one, call "
    "mcp_describe with its server and tool to read its arguments; then mcp_call with "
    '{"server": ..., "tool": ..., "arguments": {...}}.'
)


def first_line(text: str) -> str:
    line = " ".join(text.split())
    for stop in (". ", "\n"):
        if stop in line:
            line = line.split(stop, 1)[0]
            break
    return visible(line)


def index(catalogue: list[tuple[str, ToolInfo]], budget_tokens: int) -> str:
    """ "" without tools; else the header and as many lines as the budget holds, the rest named by
    count (mcp_describe of an unknown tool lists a server's tools)."""
    if not catalogue:
        return ""
    budget = budget_tokens * CHARS_PER_TOKEN
    lines = [HEADER]
    used = len(HEADER)
    shown = 0
    for server, tool in catalogue:
        line = f"- {server}/{tool.name}: {first_line(tool.description)}".rstrip(": ")
        if len(line) > LINE_CHARS:
            line = line[: LINE_CHARS - 3].rstrip() + "..."
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
        shown += 1
    if shown < len(catalogue):
        servers = sorted({s for s, _ in catalogue[shown:]})
        lines.append(
            f"({len(catalogue) - shown} more tools of {', '.join(servers)}; mcp_describe with a "
            "server and any tool name lists that server's tools)"
        )
    return "\n".join(lines)
