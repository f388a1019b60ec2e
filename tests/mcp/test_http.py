"""A remote (url) server over streamable HTTP: the official SDK's own server on a loopback port
(its answers come as server-sent events), reached by cerveau's client; its answers bounded."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cerveau_tui.config import McpServerConfig
from cerveau_tui.mcp.client import McpClient
from cerveau_tui.mcp.hub import McpHub
from cerveau_tui.mcp.wire import HttpChannel, McpError

pytest.importorskip("mcp.server.mcpserver", reason="the SDK comes with the test servers")

SERVER = """
import sys
from mcp.server.mcpserver import MCPServer
app = MCPServer("remote", log_level="ERROR")

@app.tool()
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

@app.tool()
def big() -> str:
    '''A long answer.'''
    return "x" * 200_000

app.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
"""


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until it listens (an event awaited)
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            break
        except OSError:
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.kill()
    proc.wait()


def test_a_remote_servers_tools_are_listed_and_called(url: str, tmp_path: Path) -> None:
    hub = McpHub({"remote": McpServerConfig(url=url)}, tmp_path, lambda extra: None).start()
    try:
        assert hub.status()[0]["error"] is None, hub.status()
        assert [t.name for _, t in hub.catalogue()] == ["add", "big"]
        out = hub.call("remote", "add", {"a": 2, "b": 40}, 4000)
        assert out.ok and "42" in out.text
    finally:
        hub.close()


def test_a_remote_answer_over_the_bound_is_dropped(url: str) -> None:
    client = McpClient(HttpChannel(url, max_message=50_000))
    try:
        client.initialize(30)
        with pytest.raises(McpError, match="over 50000 bytes"):
            client.call_tool("big", {}, 30)
    finally:
        client.close()
