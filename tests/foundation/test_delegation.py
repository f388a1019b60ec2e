"""Delegation as the seed specifies it: the parent's interrupt reaches the child, the child's
tokens are the parent's, the result says what was read, written and refused, the child's words
are the product's one constant, and its limits come from settings.delegation."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.delegate import (
    DELEGATE_INSTRUCTIONS,
    DelegateLimits,
    DelegateResult,
    child_ceiling,
    delegate,
)
from cerveau_tui.loop.state import Limits, Outcome
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import Usage
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

EXPLORE = {"tool_calls": [{"name": "explore", "arguments": {"task": "what is the answer?"}}]}
READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}
WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "x.txt", "content": "no"}}]}


def _run(tmp_path: Path, responses: list[dict[str, Any]], **flags: Any) -> tuple[Any, Any, Any]:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    with ScriptedServer({"responses": responses}) as srv:
        settings = load_settings(
            tmp_path, flags={"delegate": True, **flags}, environ={}, user_config=tmp_path / "n"
        )
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, provider=LlamaProvider(srv.url))
        try:
            out = s.engine.run("use explore")
        finally:
            s.close()
    return out, rec, srv


def _finished(rec: Recorder) -> dict[str, Any]:
    return [e.payload for e in rec.of("delegated") if e.payload["state"] == "finished"][0]


def test_the_child_is_told_the_products_one_constant(tmp_path):
    _, _, srv = _run(tmp_path, [EXPLORE, {"content": "42."}, {"content": "42"}])
    assert DELEGATE_INSTRUCTIONS in srv.requests[1]["messages"][-1]["content"]


def test_the_result_declares_a_refused_change_apart_from_what_was_read(tmp_path):
    out, rec, _ = _run(tmp_path, [EXPLORE, READ, WRITE, {"content": "42."}, {"content": "42"}])
    done = _finished(rec)
    # The refused write by its path: it said "write_file", which names no change at all.
    assert (done["read"], done["unwritten"]) == (["notes.txt"], ["x.txt"])
    shown = [e.payload["output"] for e in rec.of("tool_result") if e.payload["name"] == "explore"]
    assert "Refused changes: x.txt" in shown[0]


def test_the_result_has_no_list_of_writes_a_read_only_child_cannot_make():
    """`wrote` could never be non-empty (the child has no writing tool): a field that only ever
    says "nothing" is not a fact."""
    assert "wrote" not in {f.name for f in fields(DelegateResult)}


def test_the_childs_system_message_is_the_sessions_own(tmp_path):
    """With AGENTS.md in the workspace the child was sent a bare system prompt: it knew less than
    its parent and the server's cached prefix was evicted at the first token."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "AGENTS.md").write_text("Always answer in French.\n")
    _, _, srv = _run(tmp_path, [EXPLORE, {"content": "42."}, {"content": "42"}])
    parent, child = srv.requests[0]["messages"][0], srv.requests[1]["messages"][0]
    assert parent["role"] == "system" and "Always answer in French." in parent["content"]
    assert json.dumps(child) == json.dumps(parent)


def test_the_childs_tokens_are_in_the_parent_turns_usage(tmp_path):
    out, rec, _ = _run(tmp_path, [EXPLORE, READ, {"content": "42."}, {"content": "42"}])
    own = sum(e.payload["prompt_tokens"] + e.payload["completion_tokens"] for e in rec.of("usage"))
    child = _finished(rec)["prompt_tokens"] + _finished(rec)["completion_tokens"]
    ended = rec.of("turn_ended")[0].payload["usage"]
    assert child > 0
    assert ended["prompt_tokens"] + ended["completion_tokens"] == own + child


def test_the_childs_tokens_count_against_the_parents_ceiling(tmp_path):
    script = [EXPLORE, READ, {"content": "42."}, {"content": "42"}]
    _, rec, _ = _run(tmp_path / "a", script)
    ended = rec.of("turn_ended")[0].payload["usage"]
    total = ended["prompt_tokens"] + ended["completion_tokens"]
    own = sum(e.payload["prompt_tokens"] + e.payload["completion_tokens"] for e in rec.of("usage"))
    # Between the parent's own spend and its spend with the child's: only the debit crosses it.
    ceiling = total - 1
    assert own < ceiling
    out, _, _ = _run(tmp_path / "b", script, limits={"max_turn_tokens": ceiling})
    assert out.reason == "token_ceiling"


def test_the_childs_iterations_come_from_settings(tmp_path):
    flags = {"delegation": {"max_iterations": 1}}
    out, rec, srv = _run(tmp_path, [EXPLORE, READ, {"content": "42"}], **flags)
    assert _finished(rec)["reason"] == "max_iterations"
    assert len(srv.requests) == 3  # the parent, ONE child round, the parent again


def test_the_parents_interrupt_stops_the_child_before_its_next_model_call(tmp_path):
    (tmp_path / "notes.txt").write_text("x\n")
    with ScriptedServer({"responses": [EXPLORE, READ, {"content": "never"}]}) as srv:
        settings = load_settings(
            tmp_path, flags={"delegate": True}, environ={}, user_config=tmp_path / "n"
        )
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, provider=LlamaProvider(srv.url))

        def on(e: Any) -> None:
            if e.type == "delegated" and e.payload["state"] == "started":
                s.engine.interrupt()  # the person presses Esc as the child starts

        bus.subscribe(on)
        try:
            out = s.engine.run("use explore")
        finally:
            s.close()
    assert out.reason == "interrupted" and _finished(rec)["reason"] == "interrupted"
    assert len(srv.requests) == 1  # the child never called the model


class _Spy:
    def __init__(self) -> None:
        self.limits: list[Limits] = []

    def __call__(self, bus: Emitter, limits: Limits) -> Any:
        self.limits.append(limits)
        return self

    def run(self, task: str) -> Outcome:
        return Outcome("t", "completed", 1, message="ok")


def test_the_childs_ceiling_is_what_the_parent_has_left_or_its_own_cap():
    assert child_ceiling(DelegateLimits(max_tokens=0), 900) == 900
    assert child_ceiling(DelegateLimits(max_tokens=300), 900) == 300
    assert child_ceiling(DelegateLimits(max_tokens=300), None) == 300
    assert child_ceiling(DelegateLimits(max_tokens=0), None) == 0  # no ceiling anywhere


def test_a_parent_with_no_tokens_left_starts_no_child():
    spawn = _Spy()
    result = delegate("q", parent_bus=Emitter(), spawn=spawn, max_identical_calls=3, parent_left=0)
    assert result.reason == "token_ceiling" and spawn.limits == []


def test_the_child_is_spawned_with_the_parents_remainder_as_its_ceiling():
    spawn = _Spy()
    delegate("q", parent_bus=Emitter(), spawn=spawn, max_identical_calls=3, parent_left=700)
    assert spawn.limits[0].max_turn_tokens == 700


def test_the_parents_interrupt_cuts_the_childs_model_call_mid_stream(tmp_path):
    # The child's reply never comes (pings only): without the link it would wait out the timeout.
    script = [EXPLORE, {"keepalive": 0.05}, {"content": "never"}]
    with ScriptedServer({"responses": script}) as srv:
        settings = load_settings(
            tmp_path,
            flags={"delegate": True, "request_timeout_s": 30},
            environ={},
            user_config=tmp_path / "n",
        )
        s = build_session(settings, provider=LlamaProvider(srv.url))

        def interrupt_when_the_child_calls() -> None:
            while len(srv.requests) < 2:
                time.sleep(0.01)
            s.engine.interrupt()

        threading.Thread(target=interrupt_when_the_child_calls, daemon=True).start()
        outcome: list[Any] = []
        turn = threading.Thread(target=lambda: outcome.append(s.engine.run("use explore")))
        turn.start()
        turn.join(60)  # a bound on a hang, not a timing: unlinked, the child never returns
        n_requests = len(srv.requests)
        if not turn.is_alive():
            s.close()
    assert outcome, "the child kept waiting for its reply after the parent was interrupted"
    out = outcome[0]
    assert out.reason == "interrupted" and n_requests == 2


class _Spender:
    """A child that spends all it is allowed, and waits (boundedly) for a second child to start,
    as two explore calls of one reply do when they run side by side."""

    def __init__(self) -> None:
        self.started = 0
        self.both = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, bus: Emitter, limits: Limits) -> Any:
        with self.lock:
            self.started += 1
            if self.started == 2:
                self.both.set()
        return _Spent(self, limits.max_turn_tokens)


class _Spent:
    def __init__(self, spender: _Spender, allowed: int) -> None:
        self.spender, self.allowed = spender, allowed

    def run(self, task: str) -> Outcome:
        self.spender.both.wait(0.5)  # a bound on the overlap, not a timing assertion
        return Outcome("t", "completed", 1, Usage(self.allowed, 0), message="ok")


def test_children_started_side_by_side_share_the_parents_remainder():
    from cerveau_tui.config_sections import DelegationConfig
    from cerveau_tui.loop.delegate import Delegation

    spender = _Spender()
    d = Delegation(Emitter(), threading.Event(), spender, Limits(8, 3, 1000), DelegationConfig())
    results: list[Any] = []
    threads = [threading.Thread(target=lambda: results.append(d("q"))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    spent = sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in results)
    assert len(results) == 2 and spent <= 1000
