"""The session's MCP part: the hub started at creation, the index in the prefix, the two tools.

`mcp_hooks` is the session's one line (session/build.py): with no server configured it is
nothing at all (no index, no tool, no process). The hook carries the index (frozen: computed once,
from the catalogue taken at start), says at the first turn which servers failed and which
suggestions a repository's `.mcp.json` makes, and stops every server when the session closes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .. import protocol as P
from ..config import Settings
from ..hooks import Hook, TurnContext
from ..sandbox.base import Runner
from ..tools.base import Tool
from .hub import McpHub, RunnerFor
from .index import index
from .suggest import suggestions


class McpHook(Hook):
    name = "mcp"

    def __init__(self, hub: McpHub, budget_tokens: int, notes: Sequence[str] = ()) -> None:
        self.hub = hub
        self._index = index(hub.catalogue(), budget_tokens)  # frozen here, never rebuilt
        self._notes = list(notes)
        self._told = False

    def system_sections(self) -> list[str]:
        return [self._index] if self._index else []

    def on_turn_start(self, ctx: TurnContext, task: str) -> None:
        if self._told:
            return None
        self._told = True
        for s in self.hub.status():
            if s["error"]:
                text = f"MCP server {s['name']} not available: {s['error']}"
                ctx.emit(P.NoticePayload(text=text, level="warning", source=self.name))
        for text in self._notes:
            ctx.emit(P.NoticePayload(text=text, level="info", source=self.name))
        return None

    def tools(self) -> list[Tool]:
        from .tools import McpCall, McpDescribe

        if not self.hub.catalogue():
            return []
        return [McpDescribe(self.hub), McpCall(self.hub)]

    def close(self) -> None:
        self.hub.close()


def runner_factory(settings: Settings, runner: Runner, deny_read: list[Path]) -> RunnerFor:
    """Each stdio server's own runner: the session's backend, its venv (if any) shown read-only
    beside the person's `sandbox_read`, the same deny list; None where nothing is enforced."""
    from ..sandbox.select import SandboxStatus, select_runner

    def make(extra: tuple[Path, ...]) -> Runner | None:
        if not runner.enforced or runner.backend == "none":
            return None
        status = SandboxStatus(backend=runner.backend, enforced=True)
        read = [*settings.sandbox_read, *(str(p) for p in extra)]
        return select_runner(settings.model_copy(update={"sandbox_read": read}), status, deny_read)

    return make


def mcp_hooks(settings: Settings, runner: Runner, deny_read: list[Path]) -> list[Hook]:
    notes = suggestions(settings.workspace, set(settings.mcp.servers))
    servers = settings.mcp.servers
    if not servers and not notes:
        return []
    from ..sandbox.guarded import GuardedRunner

    hub = McpHub(
        servers,
        Path(os.path.realpath(settings.workspace)),
        runner_factory(settings, runner, deny_read),
        mode=settings.sandbox,
        guard=runner.bracket if isinstance(runner, GuardedRunner) else None,
    ).start()
    return [McpHook(hub, settings.mcp.index_tokens, notes)]


def mcp_tools(hooks: Sequence[Hook]) -> list[Tool]:
    hook = next((h for h in hooks if isinstance(h, McpHook)), None)
    return hook.tools() if hook is not None else []
