"""A repository's `.mcp.json`: shown to the person as a suggestion, never started by itself.

Whoever wrote the repository chose that file; a server it names is a program to run with the
session's sandbox and a place to send the model's arguments. So it is read (beneath the
workspace, no link followed, bounded), said at the first turn with the command that would make
it the person's own (`cerveau mcp add`), and nothing more: only the person's config (or a
workspace config they trusted, config.py) starts a server.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from ..reminders.reading import read_head_beneath
from ..text_safety import visible
from ..workspace.io.beneath import UnsafePath

FILE = ".mcp.json"
MAX_BYTES = 64 * 1024
MAX_SHOWN = 5


def suggested(workspace: Path) -> dict[str, dict[str, object]]:
    """The servers `.mcp.json` names ({name: its entry}); empty when absent or unreadable."""
    try:
        head = read_head_beneath(workspace, FILE, MAX_BYTES)
    except (UnsafePath, OSError):
        return {}
    if head is None or head.truncated:
        return {}
    try:
        data = json.loads(head.text)
    except ValueError:
        return {}
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}
    return {str(k)[:32]: v for k, v in servers.items() if isinstance(v, dict)}


def add_command(name: str, entry: dict[str, object]) -> str:
    if isinstance(entry.get("url"), str):
        return f"cerveau mcp add {shlex.quote(name)} --url {shlex.quote(str(entry['url']))}"
    raw = entry.get("args")
    args: list[object] = raw if isinstance(raw, list) else []
    words = [str(entry.get("command", "")), *(str(a) for a in args)]
    return f"cerveau mcp add {shlex.quote(name)} -- {shlex.join(words)}"


def suggestions(workspace: Path, configured: set[str]) -> list[str]:
    """One sentence per server `.mcp.json` names that the person has not configured."""
    found = {n: e for n, e in suggested(workspace).items() if n not in configured}
    if not found:
        return []
    shown = [f"{n}: {add_command(n, e)}" for n, e in list(found.items())[:MAX_SHOWN]]
    more = f" (and {len(found) - MAX_SHOWN} more)" if len(found) > MAX_SHOWN else ""
    return [
        visible(
            f"this repository's {FILE} suggests MCP servers; none was started (a repository's "
            f"servers run only once you add them to your own config){more}: " + "; ".join(shown)
        )
    ]
