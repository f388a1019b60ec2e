"""A delegated child (`explore`) does not cost the parent its server cache (issue 36): on a
one-slot server the parent's slot is set aside before the child and put back after, the parent's
next `cache_n` the proof; and the child sends the parent's system message and tools, so its
first request reuses the parent's prefix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.protocol import EventType
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.script_state import approx_tokens, render_prompt
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.testing.slots import ScriptedSlots

LONG = "please read the notes and tell me what they say. " * 60
EXPLORE = {"tool_calls": [{"name": "explore", "arguments": {"task": "what do the notes say?"}}]}
READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}
SCRIPT = [
    EXPLORE,  # parent
    READ,  # child
    {"content": "the notes say 42"},  # child's answer
    {"content": "42"},  # parent
]


def _explore(ws: Path, cache: Path, *, save_dir: bool) -> tuple[list[dict[str, Any]], Recorder]:
    ws.mkdir(exist_ok=True)
    (ws / "notes.txt").write_text("the answer is 42\n")
    with ScriptedServer({"responses": SCRIPT}) as srv:
        srv.state.slots = ScriptedSlots(cache / "slots" if save_dir else None)
        settings = load_settings(
            ws, flags={"delegate": True}, environ={}, user_config=ws.parent / "none.toml"
        )
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, provider=LlamaProvider(srv.url))
        try:
            out = s.engine.run(LONG)
        finally:
            s.close()
        assert out.reason == "completed"
        return list(srv.requests), rec


def _parent_usage(rec: Recorder) -> list[dict[str, Any]]:
    return [dict(e.payload) for e in rec.of(EventType.USAGE) if e.payload.get("prompt_tokens")]


def test_the_parents_request_after_an_explore_reuses_its_whole_previous_prompt(
    tmp_path: Path, cache: Path
) -> None:
    requests, rec = _explore(tmp_path / "ws", cache, save_dir=True)
    first, after = _parent_usage(rec)
    # The parent's first request whole, from the slot put back (the scripted server caches the
    # prompt it read); only the explore call and its result are read.
    assert after["cache_n"] >= len(approx_tokens(render_prompt(requests[0]))) - 1
    said = [e.payload["text"] for e in rec.of(EventType.NOTICE)]
    assert any("set aside before a delegated child ran" in t for t in said)
    assert not list((cache / "slots").glob("*-aside.bin"))  # the scratch save is gone


def test_without_a_slot_to_set_aside_the_child_evicts_the_parent(
    tmp_path: Path, cache: Path
) -> None:
    """The control: the same work on a server that cannot save slots."""
    requests, rec = _explore(tmp_path / "ws", cache, save_dir=False)
    first, after = _parent_usage(rec)
    whole = len(approx_tokens(render_prompt(requests[0])))
    # The shared system message and tools are reused; the person's long prompt is read again.
    assert after["cache_n"] <= whole - len(approx_tokens(LONG)) + 8


def test_the_child_sends_the_parents_system_and_tools_and_runs_only_reading_tools(
    tmp_path: Path, cache: Path
) -> None:
    requests, rec = _explore(tmp_path / "ws", cache, save_dir=True)
    parent, child = requests[0], requests[1]
    assert child["tools"] == parent["tools"] and child["messages"][0] == parent["messages"][0]
    offered = {t["function"]["name"] for t in child["tools"]}
    assert {"write_file", "bash", "explore"} <= offered  # sent, for the prefix; not run:
    finished = [e.payload for e in rec.of(EventType.DELEGATED) if e.payload["state"] == "finished"]
    assert finished[0]["read"] == ["notes.txt"]


def test_constrained_the_childs_grammar_allows_only_reading_tools_and_its_prompt_is_the_parents(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("the answer is 42\n")
    with ScriptedServer({"responses": SCRIPT}, supports_tools=False) as srv:
        settings = load_settings(
            ws, flags={"delegate": True}, environ={}, user_config=tmp_path / "none.toml"
        )
        s = build_session(settings, provider=LlamaProvider(srv.url))
        try:
            assert s.engine.run("what do the notes say?").reason == "completed"
        finally:
            s.close()
        parent, child = srv.requests[0], srv.requests[1]
    # The tools live in the system message in constrained mode: the same one, byte for byte.
    assert child["messages"][0] == parent["messages"][0] and "tools" not in child
    grammar, parents = json.dumps(child["response_format"]), json.dumps(parent["response_format"])
    assert "read_file" in grammar and "write_file" not in grammar and "explore" not in grammar
    assert "write_file" in parents
