"""A scripted model that copies: the pathological small model of issue 24, on the scripted server.

What it models: a fresh user's session with SmolLM2 repeated the previous turn's failing call in
the next turn (`bash ""` in three turns, `list_files test_file.txt` in three, after `--continue`
too): a tiny model imitates the most recent tool call it can see. A script entry
`{"copy": "last_call"}` is that model: it sends the newest tool call of the request's messages
again, verbatim (name and arguments), and when the request holds no tool call it answers with
the entry's `"else"` text. Every other entry is the scripted server's (script.py).

    with CopycatServer({"responses": [call, {"copy": "last_call"}, ...]}) as srv: ...
"""

from __future__ import annotations

import json
import threading
from typing import Any

from .script_state import ScriptState
from .scripted_server import ScriptedServer

DEFAULT_ANSWER = "Hello! What would you like me to do?"


def copied_entry(body: dict[str, Any], otherwise: str = DEFAULT_ANSWER) -> dict[str, Any]:
    """The newest tool call of the request's messages as a script entry, or a plain answer."""
    for m in reversed(body.get("messages") or []):
        calls = m.get("tool_calls") if m.get("role") == "assistant" else None
        if not calls:
            continue
        fn = calls[-1].get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except ValueError:
            args = fn.get("arguments") or ""
        return {"tool_calls": [{"name": fn.get("name", ""), "arguments": args}]}
    return {"content": otherwise}


class CopycatState(ScriptState):
    """The script state, with the request each entry answers at hand (per handler thread: a
    request is recorded, then answered, on the thread that read it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._local = threading.local()

    def record(self, body: dict[str, Any]) -> None:
        super().record(body)
        self._local.body = body

    def next_entry(self) -> dict[str, Any] | None:
        entry = super().next_entry()
        if entry is None or entry.get("copy") != "last_call":
            return entry
        body = getattr(self._local, "body", None) or {}
        return copied_entry(body, str(entry.get("else", DEFAULT_ANSWER)))


class CopycatServer(ScriptedServer):
    def __init__(self, script: dict[str, Any] | list[Any], n_ctx: int = 4096, **kw: Any) -> None:
        super().__init__(script, n_ctx, **kw)
        old = self.state
        self.state = CopycatState(
            script,
            n_ctx=old.n_ctx,
            supports_tools=old.supports_tools,
            extras=old.extras,
            piece=old.piece,
            log_path=old.log_path,
        )
        self.state.props, self.state.models = old.props, old.models
