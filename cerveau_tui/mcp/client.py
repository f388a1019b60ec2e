"""The three requests a client needs (initialize, tools/list, tools/call) over any channel, and
what the catalogue keeps of a tool: its name, one description, its input schema, bounded."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

from .wire import PROTOCOL_VERSION, Channel, McpError

#: Pages of tools/list read, and tools kept per server: a server that pages forever, or lists
#: thousands of tools, is cut here (the index could never show them anyway).
MAX_PAGES = 20
MAX_TOOLS = 200
MAX_DESCRIPTION = 2000  # characters of a tool's description kept (describe shows it)
#: A tool's name as the MCP spec recommends it (1-128 of these characters); any other is skipped.
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any] = field(default_factory=dict)


class McpClient:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.server_info: dict[str, Any] = {}

    def initialize(self, timeout: float) -> dict[str, Any]:
        result = self.channel.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "cerveau", "version": "0"},
            },
            timeout,
        )
        if not isinstance(result, dict):
            raise McpError("initialize: the server's answer is not an object")
        self.server_info = result
        self.channel.notify("notifications/initialized")
        return result

    def list_tools(self, timeout: float) -> list[ToolInfo]:
        out: list[ToolInfo] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            result = self.channel.request(
                "tools/list", {"cursor": cursor} if cursor else None, timeout
            )
            if not isinstance(result, dict):
                raise McpError("tools/list: the server's answer is not an object")
            for raw in result.get("tools") or []:
                tool = _tool(raw)
                if tool is not None and all(t.name != tool.name for t in out):
                    out.append(tool)
            nxt = result.get("nextCursor")
            if not isinstance(nxt, str) or not nxt or len(out) >= MAX_TOOLS:
                break
            cursor = nxt
        return out[:MAX_TOOLS]

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        result = self.channel.request("tools/call", params, timeout, cancel)
        if not isinstance(result, dict):
            raise McpError("tools/call: the server's answer is not an object")
        return result

    def close(self) -> None:
        self.channel.close()


def _tool(raw: Any) -> ToolInfo | None:
    if not isinstance(raw, dict):
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return None  # a name goes into the prefix as is: no newline, no control, no markup
    schema = raw.get("inputSchema")
    desc = raw.get("description")
    ann = raw.get("annotations")
    return ToolInfo(
        name=name,
        description=desc[:MAX_DESCRIPTION] if isinstance(desc, str) else "",
        input_schema=schema if isinstance(schema, dict) else {"type": "object"},
        annotations=ann if isinstance(ann, dict) else {},
    )
