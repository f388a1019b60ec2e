"""A turn longer than the window, end to end on the scripted server (real sockets, real SSE):
the window compacts before the server has to refuse, the request keeps the person's words and
the same system message throughout, and between compactions each request only grows at its end."""

from __future__ import annotations

import json
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.cache_probe import is_summary
from cerveau_tui.testing.scripted_server import ScriptedServer

TASK = "Write the notes f00.txt to f29.txt, one paragraph each, then say done."
# ~1.1 KB, as the measured turn in context.md; numbered, because one sentence written out 52
# times is a reply the repetition guard cuts (loop/guards/repetition.py)
PARAGRAPH = " ".join(f"Note {n} on the window." for n in range(1, 50))


def write(i: int) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": f"f{i:02d}.txt", "content": PARAGRAPH}}
        ]
    }


def run(tmp_path: Any, script: list[dict[str, Any]], n_ctx: int) -> tuple[Any, Recorder, Any]:
    env = {"CERVEAU_CONTEXT__SUMMARISE": "false", "CERVEAU_LIMITS__MAX_ITERATIONS": "60"}
    settings = load_settings(tmp_path, environ=env, user_config=tmp_path / "none.toml")
    bus = Emitter()
    rec = Recorder(bus)
    with ScriptedServer({"responses": script}, n_ctx=n_ctx) as srv:
        s = build_session(settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(srv.url))
        out = s.engine.run(TASK)
        s.close()
    # What the server counts beside the messages was measured at the first reply.
    assert s.engine.loop_state.window.overhead is not None
    return out, rec, srv


def chat_requests(srv: ScriptedServer) -> list[list[dict[str, Any]]]:
    return [b["messages"] for b in srv.requests if b.get("tools") and not is_summary(b)]


def test_a_turn_that_overflows_a_small_window_several_times_finishes(tmp_path):
    out, rec, srv = run(tmp_path, [*(write(i) for i in range(30)), {"content": "done"}], 4096)
    assert out.reason == "completed", out.message
    compactions = [e.payload for e in rec.of("compacted")]
    assert len(compactions) >= 3
    assert all(c["reason"] == "high_water" for c in compactions)  # never the server's refusal
    assert all(c["tokens_after"] < c["tokens_before"] for c in compactions)
    assert len(list(tmp_path.glob("f*.txt"))) == 30


def test_every_request_keeps_the_request_verbatim_and_the_same_system_message(tmp_path):
    _, _, srv = run(tmp_path, [*(write(i) for i in range(30)), {"content": "done"}], 4096)
    requests = chat_requests(srv)
    assert len(requests) == 31
    assert len({json.dumps(r[0]) for r in requests}) == 1
    for i, messages in enumerate(requests):
        assert any(TASK in (m.get("content") or "") for m in messages), f"request {i} lost it"


def test_between_compactions_a_request_extends_the_previous_one(tmp_path):
    _, rec, srv = run(tmp_path, [*(write(i) for i in range(30)), {"content": "done"}], 4096)
    requests = [[json.dumps(m, sort_keys=True) for m in r] for r in chat_requests(srv)]
    grown = sum(1 for a, b in zip(requests, requests[1:], strict=False) if b[: len(a)] == a)
    compactions = len(rec.of("compacted"))
    # Every pair of consecutive requests is an extension, except across a compaction.
    assert grown == len(requests) - 1 - compactions and compactions >= 3


def test_a_server_refusal_compacts_with_its_count_and_retries_once(tmp_path):
    refusal = {
        "error": {
            "status": 400,
            "message": "request (5000 tokens) exceeds the available context size (4096 tokens)",
            "type": "exceed_context_size_error",
        }
    }
    script = [*(write(i) for i in range(5)), refusal, write(5), {"content": "done"}]
    out, rec, srv = run(tmp_path, script, 8192)
    assert out.reason == "completed", out.message
    (compaction,) = [e.payload for e in rec.of("compacted")]
    assert compaction["reason"] == "server_overflow"
    assert compaction["tokens_after"] < compaction["tokens_before"]
    requests = chat_requests(srv)
    refused, retried = requests[5], requests[6]
    assert retried != refused and len(json.dumps(retried)) < len(json.dumps(refused))


def test_with_summaries_on_every_request_of_the_session_has_the_same_system_message(tmp_path):
    # The summary call is a request of the session too: one system message for all of them.
    env = {"CERVEAU_LIMITS__MAX_ITERATIONS": "60"}
    settings = load_settings(tmp_path, environ=env, user_config=tmp_path / "none.toml")
    script = [*(write(i) for i in range(30)), {"content": "done"}]
    with ScriptedServer({"responses": script}, n_ctx=4096) as srv:
        s = build_session(settings, approver=ApproveAll(), provider=LlamaProvider(srv.url))
        s.engine.run(TASK)
        s.close()
    summaries = [b for b in srv.requests if is_summary(b)]
    assert summaries, "the window never asked for a summary"
    assert len({json.dumps(b["messages"][0]) for b in srv.requests}) == 1


def test_in_constrained_mode_the_summary_continues_the_cached_conversation(tmp_path):
    # The handoff is asked as one more message after what the server already holds: the same
    # messages, the same tools, the reply held to the answer action. Before, it sent every
    # dropped round again as a transcript and the server read ~1.2k tokens for nothing.
    from cerveau_tui.loop.summarise import ANSWER_ONLY

    env = {"CERVEAU_LIMITS__MAX_ITERATIONS": "60", "CERVEAU_ACTION_MODE": "constrained"}
    settings = load_settings(tmp_path, environ=env, user_config=tmp_path / "none.toml")
    script = [*(write(i) for i in range(30)), {"content": "done"}]
    with ScriptedServer({"responses": script}, n_ctx=4096, supports_tools=False) as srv:
        provider = LlamaProvider(srv.url, action_mode="constrained")
        s = build_session(settings, approver=ApproveAll(), provider=provider)
        s.engine.run(TASK)
        s.close()
    bodies = srv.requests
    asks = [i for i, b in enumerate(bodies) if b.get("response_format") == ANSWER_ONLY]
    assert asks, "no summary was asked for"
    for i in asks:
        before, ask = bodies[i - 1]["messages"], bodies[i]["messages"]
        assert ask[: len(before)] == before  # the cached request, then more
        assert ask[-1]["role"] == "user" and "handoff" in ask[-1]["content"]
    assert len({json.dumps(b["messages"][0]) for b in bodies}) == 1


def test_the_person_is_told_while_the_summary_is_written(tmp_path):
    env = {"CERVEAU_LIMITS__MAX_ITERATIONS": "60"}
    settings = load_settings(tmp_path, environ=env, user_config=tmp_path / "none.toml")
    bus = Emitter()
    rec = Recorder(bus)
    script = [*(write(i) for i in range(30)), {"content": "done"}]
    with ScriptedServer({"responses": script}, n_ctx=4096) as srv:
        s = build_session(settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(srv.url))
        s.engine.run(TASK)
        s.close()
    kinds = [
        "said"
        if e.type == "notice" and "writing a summary" in e.payload.get("text", "")
        else e.type
        for e in rec.events
        if e.type in ("notice", "compacted")
    ]
    summaries = [e for e in rec.of("compacted") if e.payload["summary_source"] != "none"]
    assert summaries and kinds.count("said") == len(summaries)
    # each one said before its compaction is reported
    assert all(kinds[i + 1] == "compacted" for i, k in enumerate(kinds) if k == "said")
