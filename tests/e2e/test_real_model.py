"""End-to-end on the REAL llama-server with the real SmolLM2-135M (provisioned by ./scripts/test).

The model's actions are well-formed but semantically random, so these tests assert what the
harness guarantees (a valid call executed, a turn that ends with a reason), never what a 135M model
would decide. Temperature 0 keeps its choices repeatable for one build. bash only ever runs inside
the sandbox: headless runs deny every crossing, and an unenforced sandbox makes every command one.
"""

from __future__ import annotations

import json

import pytest

from cerveau_tui.testing.cli import run_cli

pytestmark = pytest.mark.e2e

#: The work is bounded, not the time: 6 rounds of at most 256 tokens (SmolLM2 at temperature 0
#: sends about 30 a reply here). HANG_S only catches a hang: far past that work on a loaded
#: machine, and under pytest-timeout's 600 s so the failure is this test's own.
ENV = {
    "CERVEAU_TEMPERATURE": "0",
    "CERVEAU_LIMITS__MAX_ITERATIONS": "6",
    "CERVEAU_MAX_TOKENS": "256",
}
HANG_S = 540


def test_the_real_model_makes_a_tool_call_the_harness_executes(real_stack, tmp_path):
    code, events, err = run_cli(
        tmp_path,
        real_stack,
        "Create a file named hello.txt containing the word hello",
        env=ENV,
        timeout=HANG_S,
    )
    results = [e["payload"] for e in events if e["type"] == "tool_result"]
    calls = [e["payload"] for e in events if e["type"] == "tool_call"]
    assert calls, f"no tool call at all: {err[-500:]}"
    assert all(c["via"] == "constrained" for c in calls)  # SmolLM2's template cannot carry tools
    assert any(
        r["status"] in ("done", "failed") for r in results
    )  # executed, not refused as malformed
    end = last_turn_ended(events)
    assert end["payload"]["reason"]


def test_the_real_model_ends_a_turn_with_a_plain_answer(real_stack, tmp_path):
    code, events, err = run_cli(
        tmp_path, real_stack, "What is 2+2? Reply with the answer only.", env=ENV, timeout=HANG_S
    )
    end = last_turn_ended(events)
    assert end["payload"]["reason"] == "completed", json.dumps(end)
    answers = [e["payload"]["content"] for e in events if e["type"] == "assistant_message"]
    assert answers and answers[-1].strip()
    assert code == 0


def test_usage_and_timings_come_from_the_real_server(real_stack, tmp_path):
    _, events, _ = run_cli(
        tmp_path, real_stack, "What is 2+2? Reply with the answer only.", env=ENV, timeout=HANG_S
    )
    usage = [e["payload"] for e in events if e["type"] == "usage"]
    assert usage and usage[0]["n_ctx"] >= 2048
    assert usage[0]["prompt_n"] + usage[0]["cache_n"] > 0 and usage[0]["predicted_n"] > 0


#: What a turn's after_turn work may say once turn_ended is out (lessons mined, notes remembered).
AFTER_TURN = {"lessons", "notice"}


def last_turn_ended(events):
    """The turn's end, with nothing but after_turn's words after it."""
    ends = [i for i, e in enumerate(events) if e["type"] == "turn_ended"]
    assert ends, [e["type"] for e in events[-5:]]
    after = {e["type"] for e in events[ends[-1] + 1 :]}
    assert after <= AFTER_TURN, after
    return events[ends[-1]]
