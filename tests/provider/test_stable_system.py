"""Constrained mode sends ONE system message per session: the same bytes when the tools offered
shrink for a round (R1), when a request carries no tools (the window's summary) and for turn
close's distill. Rewritten per request, it changed each time and the server's cache broke."""

from __future__ import annotations

from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.testing.scripted_server import ScriptedServer

TOOLS = [
    {"name": "read_file", "description": "read", "parameters": {"type": "object"}},
    {"name": "write_file", "description": "write", "parameters": {"type": "object"}},
]
SYSTEM = {"role": "system", "content": "You are a coding agent."}
ASK = {"role": "user", "content": "go"}


def test_every_request_of_a_constrained_session_opens_with_the_same_system_message() -> None:
    script = {
        "responses": [{"content": "a"}, {"content": "b"}, {"content": "c"}, {"content": "{}"}]
    }
    with ScriptedServer(script, supports_tools=False) as srv:
        p = LlamaProvider(srv.url, action_mode="constrained")
        p.complete([SYSTEM, ASK], TOOLS, max_tokens=64)
        p.complete([SYSTEM, ASK], TOOLS[:1], max_tokens=64)  # R1: reading tools only
        p.complete([SYSTEM, ASK], [], max_tokens=64)  # a summary: no tools
        p.complete_json([SYSTEM, ASK], {"type": "object"}, max_tokens=64)  # turn close
        firsts = [b["messages"][0] for b in srv.requests if b.get("messages")]
    assert len(firsts) == 4
    assert all(f == firsts[0] for f in firsts), firsts
    assert "write_file" in firsts[0]["content"]  # the full list, as the session began


def test_more_tools_than_before_replace_the_list_once() -> None:
    script = {"responses": [{"content": "a"}, {"content": "b"}, {"content": "c"}]}
    with ScriptedServer(script, supports_tools=False) as srv:
        p = LlamaProvider(srv.url, action_mode="constrained")
        p.complete([SYSTEM, ASK], TOOLS[:1], max_tokens=64)  # discussion mode: reading only
        p.complete([SYSTEM, ASK], TOOLS, max_tokens=64)  # autopilot: the writing tools come back
        p.complete([SYSTEM, ASK], TOOLS, max_tokens=64)
        firsts = [b["messages"][0]["content"] for b in srv.requests if b.get("messages")]
    assert "write_file" not in firsts[0] and "write_file" in firsts[1]
    assert firsts[1] == firsts[2]
