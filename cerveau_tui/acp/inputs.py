"""What a client's requests carry, made ours: the prompt's content blocks as the one message a
turn takes; the MCP servers and extra folders a session/new names, as what is said of them (they
are never started or opened: the workspace is the cwd, the servers are the person's config's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import schema as S

from ..text_safety import visible


def suggestions(mcp: list[Any], extra_dirs: list[str], configured: set[str]) -> list[str]:
    """What the client named beyond the cwd, said: MCP servers as suggestions (the mechanism and
    the wording of a repository's `.mcp.json`, mcp/suggest.py: the `cerveau mcp add` line that
    would make one the person's own), more folders as not opened."""
    from ..mcp.suggest import add_command

    out = []
    fresh = [m for m in mcp if getattr(m, "name", "") not in configured]
    mine = [m.name for m in mcp if getattr(m, "name", "") in configured]
    if fresh:
        shown = []
        for m in fresh[:5]:
            url = getattr(m, "url", None)
            entry = {"url": url} if url else {"command": m.command, "args": list(m.args)}
            shown.append(f"{m.name}: {add_command(m.name, entry)}")
        out.append(
            f"the client suggested MCP servers ({', '.join(str(m.name) for m in fresh)}): not "
            "started; a server runs only once you add it to your own config: " + "; ".join(shown)
        )
    if mine:
        out.append(
            f"MCP servers the client named are already yours ({', '.join(mine)}): your config's "
            "entries are in force, not the client's"
        )
    if extra_dirs:
        out.append(
            "the client named more folders (" + ", ".join(extra_dirs) + "): not opened; the "
            "workspace is the session's cwd alone"
        )
    return [visible(t) for t in out]


def prompt_text(blocks: list[Any], workspace: Path) -> str:
    """The person's prompt as one message: text as it is, a mentioned file as its path (our tools
    read it, within the boundary), an embedded file's text inline with its name."""
    parts: list[str] = []
    for b in blocks:
        if isinstance(b, S.TextContentBlock):
            parts.append(b.text)
        elif isinstance(b, S.ResourceContentBlock):
            parts.append(f"@{_shown(b.uri, workspace)}")
        elif isinstance(b, S.EmbeddedResourceContentBlock) and isinstance(
            b.resource, S.TextResourceContents
        ):
            parts.append(f"@{_shown(b.resource.uri, workspace)}:\n{b.resource.text}")
    return "\n".join(p for p in parts if p)


def _shown(uri: str, workspace: Path) -> str:
    path = uri.removeprefix("file://")
    try:
        return str(Path(path).relative_to(workspace))
    except ValueError:
        return path


def unsent(blocks: list[Any], workspace: Path) -> str | None:
    """What of the prompt the model never gets, said: an image, audio, a binary file (the
    model reads text; the client is told we take none, and may send them anyway)."""
    names = []
    for b in blocks:
        if isinstance(b, S.ImageContentBlock):
            names.append("an image")
        elif isinstance(b, S.AudioContentBlock):
            names.append("audio")
        elif isinstance(b, S.EmbeddedResourceContentBlock) and not isinstance(
            b.resource, S.TextResourceContents
        ):
            names.append(f"the binary file {_shown(b.resource.uri, workspace)}")
    if not names:
        return None
    return visible("not sent to the model (it reads text only): " + ", ".join(names))
