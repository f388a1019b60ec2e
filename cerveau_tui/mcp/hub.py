"""The session's MCP servers: started once, their tools catalogued once, called through the policy.

Started at session creation, in parallel, each bounded by its `start_timeout_s`; the catalogue
(every server's tools) is frozen then, so the prefix's index never changes mid-session (a tool a
server adds later is not offered; one it drops answers an error). A server that fails to start is
said to the person and absent from the index; the others work.

A call that gets no answer within the server's `timeout_s` stops that server (a hung server
holds its pipe, and whatever it was doing): the next call starts it again, at most
`MAX_RESTARTS` times a session. A server whose output floods is stopped by its channel
(wire.MAX_MESSAGE). Every server dies with the session (`close`, and the sandbox's own
die-with-parent and reaper).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..config import McpServerConfig
from ..sandbox.base import EnforcingRunner, Runner
from ..sandbox.served import Served
from ..text_safety import visible
from .client import McpClient, ToolInfo
from .launch import LaunchRefused, stdio_plan
from .result import render
from .schema import check
from .wire import Channel, HttpChannel, McpCancelled, McpError, McpTimeout, StdioChannel

MAX_RESTARTS = 2

#: Builds the runner a stdio server starts through, given what it must see read-only besides the
#: view (its venv); None when commands are not sandboxed here (then no stdio server starts).
RunnerFor = Callable[[tuple[Path, ...]], Runner | None]


#: Runs a call between the git check's snapshot and its check: (what it returned, a note).
Guard = Callable[[Path, Callable[[], Any]], tuple[Any, str | None]]


class UnknownTool(LookupError):
    pass


@dataclass
class Server:
    name: str
    config: McpServerConfig
    tools: list[ToolInfo] = field(default_factory=list)
    error: str | None = None
    client: McpClient | None = None
    runner: Runner | None = None
    pid: int | None = None  # the sandbox launcher's (the server runs beneath it)
    started_ms: float = 0.0
    restarts: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def remote(self) -> str | None:
        return urlsplit(self.config.url).netloc or None if self.config.url else None


@dataclass(frozen=True)
class Outcome:
    text: str
    ok: bool
    truncated: bool = False
    duration_ms: float = 0.0


class McpHub:
    def __init__(
        self,
        servers: dict[str, McpServerConfig],
        workspace: Path,
        runner_for: RunnerFor,
        *,
        mode: str = "workspace-write",
        guard: Guard | None = None,
    ) -> None:
        """`guard`: the session's git check (GuardedRunner.bracket), run around each call."""
        self.workspace = workspace
        self.guard = guard
        self.runner_for = runner_for
        self.mode = mode
        self.servers = {n: Server(n, c) for n, c in servers.items() if c.enabled}
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="cerveau-mcp-spawn")

    # -- starting -----------------------------------------------------------------------------
    def start(self) -> McpHub:
        threads = [
            threading.Thread(target=self._first_start, args=(s,), daemon=True)
            for s in self.servers.values()
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return self

    def _first_start(self, server: Server) -> None:
        try:
            server.tools = self._connect(server)
        except (McpError, OSError) as exc:
            server.error = str(exc)
            self._stop(server)

    def _connect(self, server: Server) -> list[ToolInfo]:
        cfg = server.config
        began = time.monotonic()
        served: Served | None = None
        channel: Channel
        if cfg.url:
            channel = HttpChannel(cfg.url)
        else:
            plan = stdio_plan(cfg, self.workspace, self.mode)
            runner = server.runner or self.runner_for(plan.read_allow)
            if not isinstance(runner, EnforcingRunner):
                raise LaunchRefused(
                    "not started: commands are not sandboxed on this machine, and an MCP server "
                    "runs only inside the sandbox"
                )
            server.runner = runner
            # From the one long-lived thread: bubblewrap's --die-with-parent (and the Landlock
            # helper's parent-death signal) fire when the THREAD that started the launcher
            # ends; started from a start-up or dispatch thread, a server was killed (-9) the
            # moment that thread finished.
            served = self._spawner.submit(runner.start, plan.spec).result()
            server.pid = served.pid
            channel = StdioChannel(served)
        client = McpClient(channel)
        server.client = client
        try:
            client.initialize(cfg.start_timeout_s)
            tools = client.list_tools(cfg.start_timeout_s)
        except McpError as exc:
            tail = served.stderr_tail() if served is not None else ""
            said = f"; its last words: {tail.strip()[-300:]}" if tail.strip() else ""
            raise McpError(f"{exc}{said}") from exc
        server.started_ms = (time.monotonic() - began) * 1000
        return tools

    def _stop(self, server: Server) -> None:
        if server.client is not None:
            server.client.close()
            server.client = None

    # -- what the model sees -------------------------------------------------------------------
    def catalogue(self) -> list[tuple[str, ToolInfo]]:
        return [(s.name, t) for s in self.servers.values() for t in s.tools]

    def tool(self, server: str, name: str) -> tuple[Server, ToolInfo]:
        s = self.servers.get(server)
        if s is None or (not s.tools and s.error):
            known = ", ".join(n for n, x in self.servers.items() if x.tools) or "none"
            why = f" (it failed to start: {s.error[:200]})" if s is not None and s.error else ""
            raise UnknownTool(f"no MCP server {server[:60]!r}{why}; the servers are: {known}")
        found = next((t for t in s.tools if t.name == name), None)
        if found is None:
            names = ", ".join(t.name for t in s.tools)
            raise UnknownTool(f"server {server!r} has no tool {name[:80]!r}; its tools: {names}")
        return s, found

    def describe(self, server: str, name: str) -> str:
        s, t = self.tool(server, name)
        schema = json.dumps(t.input_schema, ensure_ascii=False, separators=(",", ":"))
        marked = "read-only (marked so in your config)" if s.config.marks_read_only(t.name) else ""
        lines = [f"[mcp {s.name}/{t.name}]", visible(t.description) or "(no description)"]
        if marked:
            lines.append(marked)
        lines.append(f"arguments schema: {visible(schema)}")
        lines.append(
            f'call it: mcp_call {{"server": "{s.name}", "tool": "{t.name}", "arguments": {{...}}}}'
        )
        return "\n".join(lines)

    def check(self, server: str, name: str, arguments: dict[str, Any]) -> list[str]:
        _, t = self.tool(server, name)
        return check(t.input_schema, arguments)

    def call(
        self,
        server: str,
        name: str,
        arguments: dict[str, Any],
        cap: int,
        cancel: threading.Event | None = None,
    ) -> Outcome:
        s, t = self.tool(server, name)
        began = time.monotonic()
        with s.lock:
            client = s.client
            if client is None:
                if s.restarts >= MAX_RESTARTS:
                    raise McpError(f"server {s.name!r} was stopped {s.restarts} times; not again")
                s.restarts += 1
                self._connect(s)  # the catalogue stays as it was at the start
                client = s.client
        assert client is not None

        def act() -> dict[str, Any] | McpError:
            try:
                return client.call_tool(t.name, arguments, s.config.timeout_s, cancel)
            except McpError as exc:  # checked by the guard all the same, raised after
                return exc

        # The git check around the call, as around a command (sandbox/guarded.py): under
        # Landlock the workspace's .git is writable to the server, and a hook it planted would
        # run at the person's next `git` on the host.
        got, note = self.guard(self.workspace, act) if self.guard is not None else (act(), None)
        try:
            if isinstance(got, McpError):
                raise got
            result = got
        except McpCancelled:
            raise  # the person stopped the turn: the server is told and stays
        except McpTimeout as exc:
            with s.lock:
                self._stop(s)
            raise McpTimeout(
                f"{s.name}/{t.name}: no answer within {s.config.timeout_s:g} s; the server was "
                "stopped (the next call starts it again)"
            ) from exc
        except McpError:
            with s.lock:
                self._stop(s)
            raise
        text, is_error, truncated = render(result, cap)
        if note is not None:
            text = f"{text}\n{note}"
        ms = (time.monotonic() - began) * 1000
        return Outcome(text, not is_error, truncated, ms)

    def read_only(self, server: str, name: str) -> bool:
        s = self.servers.get(server)
        return s is not None and s.config.marks_read_only(name)

    # -- the person's view ----------------------------------------------------------------------
    def status(self) -> list[dict[str, Any]]:
        out = []
        for s in self.servers.values():
            out.append(
                {
                    "name": s.name,
                    "transport": "http" if s.config.url else "stdio",
                    "started": s.error is None and bool(s.tools or s.client),
                    "tools": [t.name for t in s.tools],
                    "error": s.error,
                    "start_ms": round(s.started_ms, 1),
                }
            )
        return out

    def close(self) -> None:
        for s in self.servers.values():
            self._stop(s)
            if s.runner is not None:
                s.runner.kill_background()
        self._spawner.shutdown(wait=False)
