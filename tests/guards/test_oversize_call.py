"""A call the window cannot carry is answered with the room there is and never kept whole in the
history: a 3 MB `write_file` the reply cap let through was run, kept, and every later request
overflowed the server's context (the turn ended as an error). Through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer


def _write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def test_a_call_larger_than_the_window_is_refused_and_the_turn_goes_on(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # Lines that differ: one line said 500,000 times is cut as it streams (guards/repetition.py).
    big = "".join(f"x{i} = {i}\n" for i in range(200_000))
    script = {"responses": [_write("big.py", big), {"content": "ok"}]}
    with ScriptedServer(script) as srv:
        code, events, _ = run_cli(ws, srv.url, "write it")
        requests = list(srv.requests)
    ended = [e["payload"] for e in events if e["type"] == "turn_ended"][-1]
    told = [e["payload"]["output"] for e in events if e["type"] == "tool_result"][0]
    assert ended["reason"] == "completed", ended
    assert "was not run" in told and "parts" in told
    assert not (ws / "big.py").exists()
    # The next request carries the refusal, not the 3 MB.
    assert len(requests) == 2 and len(json.dumps(requests[1])) < 100_000


def test_a_call_that_fits_is_run_as_before(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = {"responses": [_write("small.py", "x = 1\n" * 200), {"content": "ok"}]}
    with ScriptedServer(script) as srv:
        run_cli(ws, srv.url, "write it")
    assert (ws / "small.py").read_text() == "x = 1\n" * 200
