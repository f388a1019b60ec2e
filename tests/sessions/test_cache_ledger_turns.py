"""The cache ledger on a real session against the scripted server: turn_ended carries the sums of
the server's own figures, the usage events carry each request's, and a request that re-reads the
conversation is a `cache_miss` notice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cerveau_tui.protocol import EventType
from cerveau_tui.session.listing import sessions_command
from cerveau_tui.testing.script_state import approx_tokens, render_prompt
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import open_session, write

LONG = "please read this carefully. " * 120  # ~800 scripted tokens: far above the miss floor


def _server_figures(bodies: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(evaluated, reused) per request, recomputed from what the server received: the longest
    common prefix with the previous prompt is reused, at least one token is evaluated."""
    out: list[tuple[int, int]] = []
    cached: list[int] = []
    for body in bodies:
        prompt = approx_tokens(render_prompt(body))
        common = 0
        for a, b in zip(prompt, cached, strict=False):
            if a != b:
                break
            common += 1
        common = min(common, max(0, len(prompt) - 1))
        out.append((len(prompt) - common, common))
        cached = prompt
    return out


def test_turn_ended_sums_the_servers_evaluated_and_reused_tokens(tmp_path: Path) -> None:
    script = {"responses": [write("a.txt", "x"), {"content": "done"}]}
    with ScriptedServer(script) as srv:
        session, rec = open_session(tmp_path, srv.url)
        try:
            session.engine.run(LONG)
        finally:
            session.close()
        figures = _server_figures(srv.requests)
    ended = rec.of(EventType.TURN_ENDED)[-1].payload
    assert len(figures) == 2 and figures[1][1] > 0  # the second request reused the first
    assert ended["prompt_evaluated"] == sum(e for e, _ in figures)
    assert ended["prompt_cached"] == sum(c for _, c in figures)
    usage = [(e.payload["prompt_n"], e.payload["cache_n"]) for e in rec.of(EventType.USAGE)]
    assert usage == figures


def test_a_request_that_rereads_the_conversation_is_a_cache_miss_notice(tmp_path: Path) -> None:
    script = {"responses": [{"content": "one"}, {"content": "two"}]}
    with ScriptedServer(script) as srv:
        session, rec = open_session(tmp_path, srv.url)
        try:
            session.engine.run(LONG)
            srv.state.forget_cache()  # as a restarted server would
            session.engine.run("and now?")
        finally:
            session.close()
    misses = [
        e.payload for e in rec.of(EventType.NOTICE) if e.payload.get("source") == "cache_miss"
    ]
    assert len(misses) == 1
    assert "cache miss" in misses[0]["text"] and "lost its cache" in misses[0]["text"]


def test_a_request_that_reuses_the_cache_says_no_miss(tmp_path: Path) -> None:
    script = {"responses": [{"content": "one"}, {"content": "two"}]}
    with ScriptedServer(script) as srv:
        session, rec = open_session(tmp_path, srv.url)
        try:
            session.engine.run(LONG)
            session.engine.run("and now?")
        finally:
            session.close()
    assert not [e for e in rec.of(EventType.NOTICE) if e.payload.get("source") == "cache_miss"]


def test_the_session_listing_sums_the_cache_ledger_of_every_turn(tmp_path: Path) -> None:
    script = {"responses": [{"content": "one"}, {"content": "two"}]}
    with ScriptedServer(script) as srv:
        session, rec = open_session(tmp_path, srv.url)
        try:
            session.engine.run(LONG)
            session.engine.run("and now?")
        finally:
            session.close()
        figures = _server_figures(srv.requests)
    code, out = sessions_command(tmp_path, as_json=True)
    (listed,) = json.loads(out)
    evaluated, cached = sum(e for e, _ in figures), sum(c for _, c in figures)
    assert (listed["prompt_evaluated"], listed["prompt_cached"]) == (evaluated, cached)
    assert listed["cache_pct"] == int(100 * cached / (evaluated + cached))
