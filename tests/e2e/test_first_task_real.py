"""A new user's first task on the REAL embedded model (issue 24), bounded: a one-bug pytest project,
the detected gate, three turns of `cerveau run --json` with `--continue`, a few rounds each
(cerveau_tui/testing/first_task.py). SmolLM2-135M's actions are random, so this asserts what the
harness guarantees: every turn ends with a reason, the rounds lost are counted from the events,
the same cut-off request is never offered twice, and the model's commands ran inside the sandbox
or not at all, checked from the host. `benchmarks/first_task.py` prints the figures."""

from __future__ import annotations

import pytest

from cerveau_tui.loop.guards.lost_rounds import count_lost
from cerveau_tui.testing.first_task import (
    HARNESS_DIR,
    TURNS,
    FirstTask,
    make_project,
    run_first_task,
)

#: The work is bounded, not the time: 3 turns of at most 4 rounds of 256 tokens. A turn's
#: TURN_HANG_S only catches a hang, and the first test's guard (it runs the fixture) holds all 3:
#: on 2 cores loaded 5 times over the 3 turns took 532 s, against pytest-timeout's 600.
MAX_ITERATIONS, MAX_TOKENS, TURN_HANG_S = 4, 256, 600.0
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(int(len(TURNS) * TURN_HANG_S) + 120)]


@pytest.fixture(scope="module")
def first_task(real_stack: str, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("first-task")
    ws = root / "ws"
    make_project(ws)
    outside = root / "outside.txt"  # beside the workspace: a command must never reach it
    outside.write_text("untouched\n")
    before = sorted(p.name for p in root.iterdir())
    run = run_first_task(
        ws, real_stack, max_iterations=MAX_ITERATIONS, max_tokens=MAX_TOKENS, timeout=TURN_HANG_S
    )
    return run, root, before


def test_every_turn_ends_cleanly_with_a_reason(first_task) -> None:
    run, _, _ = first_task
    run: FirstTask
    assert len(run.turns) == len(TURNS)
    assert all(code >= 0 for code in run.returncodes), run.stderr[-2000:]
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    for events in run.turns:
        ended = [e for e in events if e["type"] == "turn_ended"]
        assert len(ended) == 1 and ended[0]["payload"]["reason"], [e["type"] for e in events]
    internal = [e for e in run.of("error") if e.get("error_class") == "internal"]
    assert internal == []


def test_the_rounds_lost_are_counted_from_the_events(first_task) -> None:
    run, _, _ = first_task
    lost = count_lost(run.turns)
    started = [e for t in run.turns for e in t if e["type"] == "iteration_started"]
    assert lost.rounds == len(started) and lost.turns == len(TURNS)
    assert 0 < lost.rounds <= MAX_ITERATIONS * len(TURNS)
    assert sum(lost.lost.values()) <= lost.rounds
    assert lost.lost["repeat_stop"] <= sum(
        1 for r in run.of("tool_result") if r["status"] == "guarded"
    )
    assert lost.ended == [t["reason"] for t in run.of("turn_ended")]
    # The harness never offers a cut-off call the same request again (guards/cut_retry.py).
    assert lost.lost["truncation_repeat"] == 0


def test_the_models_commands_ran_in_the_sandbox_or_not_at_all(first_task) -> None:
    run, root, before = first_task
    assert (root / "outside.txt").read_text() == "untouched\n"
    made = sorted(p.name for p in root.iterdir())
    assert set(made) - set(before) <= {HARNESS_DIR}, made
    started = run.of("session_started")
    assert started
    enforced = all(s.get("sandbox", {}).get("enforced") for s in started)
    bash = [r for r in run.of("tool_result") if r["name"] == "bash"]
    assert enforced or all(
        r["status"] in ("denied", "guarded") or r.get("error_class") == "args" for r in bash
    )
