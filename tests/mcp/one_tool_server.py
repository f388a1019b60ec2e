"""A one-tool stdio MCP server for a test to write out: tool `t` with the schema it is given; a
call runs the test's `on_call` body (argv, `result` to set) and writes `result` back."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

LOOP = r"""
ANSWERS = {
    "initialize": lambda: {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "one", "version": "0"}},
    "tools/list": lambda: {"tools": [{"name": "t", "description": "d", "inputSchema": SCHEMA}]},
}
for msg in map(json.loads, sys.stdin):
    if msg.get("id") is not None:  # a notification needs no answer
        result = ANSWERS.get(msg.get("method"), on_call)()
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def install(path: Path, on_call: str, schema: dict[str, Any] | None = None) -> Path:
    """`on_call`: the body of a function returning the tools/call result (indented 4)."""
    body = f"#!/usr/bin/python3\nimport json, sys\nSCHEMA = {json.dumps(schema or {'type': 'object'})}\n"
    body += f"def on_call():\n{on_call}\n{LOOP}"
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path
