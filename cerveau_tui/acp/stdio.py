"""`cerveau acp`'s stdin and stdout as the SDK's connection. Our stdout is the protocol's alone."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Callable
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
    reader = asyncio.StreamReader(limit=2 * MAX_LINE)
    transport, protocol = await loop.connect_write_pipe(_WriteProtocol, proto)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    def too_long(head: bytes) -> None:
        said = f"a message over {MAX_LINE} bytes was dropped unread (cerveau acp's line limit)"
        print(f"cerveau acp: {said}", file=sys.stderr)
        error = {"code": -32600, "message": "Invalid Request", "data": {"details": said}}
        answer = {"jsonrpc": "2.0", "id": request_id(head), "error": error}
        writer.write(json.dumps(answer).encode() + b"\n")

    await loop.connect_read_pipe(lambda: _CappedLines(reader, too_long), sys.stdin)
    # The SDK's Agent Protocol is the whole surface (fork, resume, config options...); its router
    # answers "method not found" for what an agent leaves out, so ours is a partial Agent.
    conn = AgentSideConnection(cast(Agent, agent), writer, reader, listening=False)
    try:
        await conn.listen()
    finally:
        await agent.close()
        await conn.close()


#: The longest line read from the client. The SDK's reader has no bound of its own (it joins a
#: line's chunks past the StreamReader's limit), so a client's 100 MB line was held, parsed and
#: echoed whole (780 MB resident, measured). A prompt's embedded files are the longest thing a
#: client sends; 8 MiB is far past what the model's window takes.
MAX_LINE = 8 * 1024 * 1024


#: A request's id where clients put it, among the first keys of the object: what a dropped line's
#: answer names, so the client's request fails instead of waiting for ever. Anywhere else (after
#: its params), the line is answered with id null, as JSON-RPC answers what it cannot read.
_ID = re.compile(
    rb'\A\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]{0,64}"\s*,)*'
    rb'\s*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,128}")\s*[,}]'
)
HEAD = 512  # bytes of a line kept to find its id


def request_id(head: bytes) -> int | str | None:
    m = _ID.match(head)
    return json.loads(m.group(1)) if m else None


class _CappedLines(asyncio.StreamReaderProtocol):
    """Stdin as the SDK reads it, with no line past MAX_LINE: what a longer line sent so far is
    cut by a newline (the SDK skips it as JSON it cannot parse), the rest dropped up to its end,
    and `too_long` says so once per line."""

    def __init__(self, reader: asyncio.StreamReader, too_long: Callable[[bytes], None]) -> None:
        super().__init__(reader)
        self._too_long = too_long
        self._run = 0  # bytes of the current line passed on
        self._head = b""  # its first HEAD bytes
        self._dropping = False

    def data_received(self, data: bytes) -> None:
        out = bytearray()
        start = 0
        while start < len(data):
            nl = data.find(b"\n", start)
            end = len(data) if nl < 0 else nl + 1
            if self._dropping:
                self._dropping = nl < 0
            elif self._run + end - start > MAX_LINE:
                out += b"\n"
                head = (self._head + data[start : start + HEAD])[:HEAD]
                self._run, self._head, self._dropping = 0, b"", nl < 0
                self._too_long(head)
            else:
                out += data[start:end]
                if len(self._head) < HEAD:
                    self._head = (self._head + data[start : start + HEAD])[:HEAD]
                if nl >= 0:
                    self._run, self._head = 0, b""
                else:
                    self._run += end - start
            start = end
        if out:
            super().data_received(bytes(out))


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
