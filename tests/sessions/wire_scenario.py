"""A scripted session whose every request body is captured from the scripted server: the bytes
llama-server's prefix cache is keyed on. Used by test_wire_identity.py against the bodies the
code sent before the history became typed (data/wire_before.json).

    python tests/sessions/wire_scenario.py OUT.json   # with PYTHONPATH at the tree to capture

Regenerate the file only for a change that MEANS to alter what the model reads (a new wording),
and say so in the commit: every such change evicts the cached prefix of a resumed session.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


#: Three turns: writes, a read, a call the policy asks about (denied: nobody to ask), an unknown
#: tool, a final answer each; between them the person's own command and an undo (a rewind of the
#: last turn's code).
SCRIPT = {
    "responses": [
        _call("write_file", path="a.txt", content="alpha\n"),
        _call("read_file", path="a.txt"),
        _call("write_file", path="notes/x.md", content="# x\n"),
        {"content": "wrote a.txt"},
        _call("nope", x=1),
        _call("list_files", path="."),
        {"content": "listed"},
        _call("write_file", path="b.txt", content="beta\n"),
        {"content": "wrote b.txt"},
        {"content": "after the undo"},
    ]
}


def capture(ws: Path) -> list[str]:
    """Each request body as JSON text; the workspace and the server's port (the system prompt
    names it) spelled <ws>, <server>, <port>: they change from run to run."""
    user = ws.parent / f"{ws.name}-user.toml"
    user.write_text('[[rules]]\npattern = "notes/**"\naction = "ask"\n')
    settings = load_settings(ws, flags={"approval": "on-request"}, environ={}, user_config=user)
    with ScriptedServer(SCRIPT) as srv:
        s = build_session(settings, bus=Emitter(), provider=LlamaProvider(srv.url))
        try:
            s.engine.run("write a.txt, read it, then note it")
            s.engine.run("what else is here?")
            s.engine.exec("echo from-the-person")
            s.engine.run("write b.txt")
            s.rewinder.rewind_last_turn()
            s.engine.run("go on")
        finally:
            s.close()
        bodies, url = list(srv.requests), srv.url.rstrip("/")
    port = url.rsplit(":", 1)[-1]
    return [
        json.dumps(b).replace(str(ws), "<ws>").replace(url, "<server>").replace(port, "<port>")
        for b in bodies
    ]


def main(out: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CERVEAU_CONFIG"] = str(Path(tmp) / "config.toml")
        ws = Path(tmp) / "ws"
        ws.mkdir()
        Path(out).write_text(json.dumps(capture(ws), indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
