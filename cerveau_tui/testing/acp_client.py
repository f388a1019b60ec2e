"""Drive the real `cerveau acp` with the ACP SDK's own client side, as an editor would.

The client advertises everything a client can offer an agent (file reads and writes, a terminal)
and records any call to them: cerveau must use none. Its dialog answers come from `answer`
(option kinds in order of preference; None: stay silent, as a person who walked away), and every
`session/update` is kept with the moment it arrived.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

from acp import RequestError, spawn_agent_process
from acp import schema as S
from acp.client.connection import ClientSideConnection
from acp.interfaces import Client

#: Picks the option to answer a permission request with (its id), or None to never answer.
Answer = Callable[[S.ToolCallUpdate, list[S.PermissionOption]], str | None]


def pick(kind: str) -> Answer:
    """Answer every request with the first option of this kind."""

    def answer(_call: S.ToolCallUpdate, options: list[S.PermissionOption]) -> str | None:
        return next(o.option_id for o in options if o.kind == kind)

    return answer


def silent(_call: S.ToolCallUpdate, _options: list[S.PermissionOption]) -> str | None:
    return None


@dataclass
class Asked:
    session_id: str
    tool_call: S.ToolCallUpdate
    options: list[S.PermissionOption]
    at: float


@dataclass
class RecordingClient:
    answer: Answer = silent
    updates: list[tuple[float, str, Any]] = field(default_factory=list)
    asked: list[Asked] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)  # fs/* and terminal/* calls made to us

    async def request_permission(
        self, options: list[S.PermissionOption], session_id: str, tool_call: S.ToolCallUpdate,
        **kwargs: Any,
    ) -> S.RequestPermissionResponse:  # fmt: skip
        self.asked.append(Asked(session_id, tool_call, options, time.monotonic()))
        chosen = self.answer(tool_call, options)
        if chosen is None:
            await asyncio.Event().wait()  # silence: until the agent withdraws or hangs up
        return S.RequestPermissionResponse(
            outcome=S.AllowedOutcome(outcome="selected", option_id=str(chosen))
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((time.monotonic(), session_id, update))

    def of(self, kind: str) -> list[Any]:
        return [u for _, _, u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    async def _refused(self, method: str) -> Any:
        self.forbidden.append(method)
        raise RequestError.method_not_found(method)

    async def write_text_file(self, **kwargs: Any) -> Any:
        return await self._refused("fs/write_text_file")

    async def read_text_file(self, **kwargs: Any) -> Any:
        return await self._refused("fs/read_text_file")

    async def create_terminal(self, **kwargs: Any) -> Any:
        return await self._refused("terminal/create")

    async def terminal_output(self, **kwargs: Any) -> Any:
        return await self._refused("terminal/output")

    async def release_terminal(self, **kwargs: Any) -> Any:
        return await self._refused("terminal/release")

    async def wait_for_terminal_exit(self, **kwargs: Any) -> Any:
        return await self._refused("terminal/wait_for_exit")

    async def kill_terminal(self, **kwargs: Any) -> Any:
        return await self._refused("terminal/kill")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.forbidden.append(method)
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


#: Everything a client can offer: cerveau is to take none of it.
OFFER_ALL = S.ClientCapabilities(
    fs=S.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)


@asynccontextmanager
async def cerveau_acp(
    client: RecordingClient,
    *flags: str,
    stderr: IO[str] | None = None,
    env: dict[str, str] | None = None,
    config_beside: Path | None = None,
) -> AsyncIterator[ClientSideConnection]:
    """`cerveau acp FLAGS` as a child process, initialized, the SDK's client connected to it.
    `config_beside`: the person's config is kept out (a file beside this folder that is not
    there), as the CLI tests do."""
    full = {
        k: v
        for k, v in os.environ.items()
        if k.startswith(("CERVEAU_", "PYTHON", "LANG")) and not k.startswith("CERVEAU_TEST_")
    }
    if config_beside is not None:
        full["CERVEAU_CONFIG"] = str(config_beside.parent / f"{config_beside.name}.no-config.toml")
    full.update(env or {})
    async with spawn_agent_process(
        cast(Client, client),  # a partial Client: the SDK's router refuses what it leaves out
        sys.executable,
        "-m",
        "cerveau_tui",
        "acp",
        *flags,
        env=full,
        transport_kwargs={"stderr": stderr, "shutdown_timeout": 30.0},
    ) as (conn, _proc):
        await conn.initialize(protocol_version=1, client_capabilities=OFFER_ALL)
        yield conn
