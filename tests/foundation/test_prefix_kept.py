"""One session sends one tools list and one system message, whatever narrows the model mid-way.

Measured (issue 36): a done-ladder turn re-read its whole prompt at each rung (938, then 1,933,
then 2,721 tokens for 0-783 appended), because R1's read-only round changed the `tools` sent and
native tools are rendered into the prompt's prefix. Here a scripted session goes through every
mid-session narrowing the harness has (a done-ladder turn whose model claims done with the check
red, R1's read-only round with a write in it, a cut-off tool call, discussion mode switched on and
off) and every request the server received is compared, and the cache ledger reports no miss.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

CUT_PLAN = {
    "name": "commit_plan",
    "raw_arguments": '{"steps": [{"id": "1", "title": "read the failing check and',
    "finish_reason": "length",
}


def _write(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x\n"}}]}


def _session(tmp_path: Path, url: str, bus: Emitter) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(
        ws,
        flags={"done": {"gate": "test -f DONE", "max_stall_cycles": 1}},
        environ={},
        user_config=tmp_path / "none.toml",
    )
    return build_session(settings, bus=bus, provider=LlamaProvider(url))


def _scripted_session(tmp_path: Path, supports_tools: bool) -> tuple[list[dict[str, Any]], Any]:
    turn1 = [
        {"content": "done"},  # the check is red: R1, a read-only round
        _write("DONE"),  # in R1's round: refused
        CUT_PLAN,  # cut at the cap: the retry is told (and bounded)
        {"content": "done"},  # R2
        {"content": "done"},  # R3 (no file to name: read-only again), then the ladder parks
        {"content": "done"},
    ]
    turn2 = [_write("notes.txt"), {"content": "a plan, in words"}]  # discussion mode
    turn3 = [{"content": "back"}]
    bus = Emitter()
    notices: list[dict[str, Any]] = []
    bus.subscribe(lambda e: notices.append(e.payload) if e.type == "notice" else None)
    with ScriptedServer(turn1 + turn2 + turn3, n_ctx=32768, supports_tools=supports_tools) as srv:
        s = _session(tmp_path, srv.url, bus)
        try:
            s.engine.run("make the check pass")
            s.set_discuss(True)
            s.engine.run("how would you split this module?")
            s.set_discuss(False)
            s.engine.run("go on")
        finally:
            s.close()
        return list(srv.requests), notices


@pytest.mark.parametrize("supports_tools", [True, False], ids=["native", "constrained"])
def test_every_request_of_a_session_sends_the_same_tools_and_system_message(
    tmp_path: Path, supports_tools: bool
) -> None:
    requests, notices = _scripted_session(tmp_path, supports_tools)
    chat = [r for r in requests if r.get("tools") or r.get("response_format")]
    assert len(chat) >= 9, len(chat)
    tools = {json.dumps(r.get("tools"), sort_keys=True) for r in chat}
    systems = {json.dumps(r["messages"][0], sort_keys=True) for r in chat}
    assert len(tools) == 1 and len(systems) == 1
    # Each narrowing happened, as a refusal the model read (a tool result, or in constrained
    # mode the user message it is rewritten into).
    told = "\n".join(str(m.get("content")) for m in chat[-1]["messages"])
    assert "refused: this round is read-only (escalation R1" in told
    assert "refused: discussion mode (read and plan only); `write_file` does not run" in told
    assert "cut off" in told and "[discussion mode] Read and plan only" in told
    assert "[discussion mode ended]" in told
    # The ledger, which names a changed prefix as a miss, saw none.
    misses = [n["text"] for n in notices if n.get("source") == "cache_miss"]
    assert misses == []


def test_in_constrained_mode_the_read_only_round_narrows_the_grammar_only(tmp_path: Path) -> None:
    """The action grammar is a request field outside the prompt: narrowing it costs no cache."""
    requests, _ = _scripted_session(tmp_path, supports_tools=False)
    actions = [json.dumps(r["response_format"]) for r in requests[:2]]
    assert '"write_file"' in actions[0] and '"write_file"' not in actions[1]
    assert '"read_file"' in actions[1]
