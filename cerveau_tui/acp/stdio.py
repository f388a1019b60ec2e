"""`cerveau acp`'s stdin and stdout as the SDK's connection. Our stdout is the protocol's alone."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import cast

from acp.agent.connection import AgentSideConnection
from acp.interfaces import Agent

from .agent import CerveauAgent


async def serve(agent: CerveauAgent) -> None:
    """Run the agent on this process's stdin and stdout until the client hangs up. Our stdout is
    the protocol's alone: fd 1 is pointed at stderr first, so nothing else printed (a library's
    warning, a child that inherited it) can put a stray line into the JSON-RPC stream."""
    sys.stdout.flush()
    proto = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(_WriteProtocol, proto)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    # The SDK's Agent Protocol is the whole surface (fork, resume, config options...); its router
    # answers "method not found" for what an agent leaves out, so ours is a partial Agent.
    conn = AgentSideConnection(cast(Agent, agent), writer, reader, listening=False)
    try:
        await conn.listen()
    finally:
        await agent.close()
        await conn.close()


class _WriteProtocol(asyncio.BaseProtocol):
    """A write pipe's protocol with the drain a StreamWriter awaits (the SDK's stdio does the
    same for sys.stdout; ours writes to the duplicated descriptor)."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Future[None] | None = None

    def pause_writing(self) -> None:
        if self._waiter is None:
            self._waiter = self._loop.create_future()

    def resume_writing(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _drain_helper(self) -> None:
        if self._waiter is not None:
            await self._waiter
