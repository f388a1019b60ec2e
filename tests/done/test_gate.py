"""The gate's decision: accept, re-enter on progress, climb on stall, park or stop."""

from __future__ import annotations

from cerveau_tui.done.criteria import CriterionState, Report
from cerveau_tui.done.gate import Gate


def rep(**states: str) -> Report:
    return Report({k: CriterionState(v) for k, v in states.items()})


RED = rep(tests="unmet")


def test_all_met_is_accepted() -> None:
    gate = Gate()
    gate.baseline(RED, ["e1"])
    assert gate.judge(rep(tests="met"), []).action == "accept"


def test_only_unavailable_criteria_never_provoke_reentry() -> None:
    gate = Gate()
    assert gate.judge(rep(docs="unavailable"), []).action == "accept"


def test_a_shrinking_unmet_set_reenters_as_progress() -> None:
    gate = Gate()
    gate.baseline(rep(tests="unmet", lint="unmet"), [])
    d = gate.judge(rep(tests="unmet", lint="met"), [])
    assert (d.action, d.progress) == ("reenter", True)


def test_a_falling_error_count_is_progress_though_the_unmet_set_is_unchanged() -> None:
    gate = Gate()
    gate.baseline(RED, ["a", "b", "c"])
    for errors in (["a", "b"], ["a"]):
        d = gate.judge(RED, errors)
        assert (d.action, d.progress, d.stall) == ("reenter", True, 0)


def test_the_same_errors_count_stall_cycles_then_climb_one_rung() -> None:
    gate = Gate(max_stall_cycles=2)
    gate.baseline(RED, ["a"])
    first = gate.judge(RED, ["a"])
    second = gate.judge(RED, ["a"])
    assert (first.action, first.stall) == ("reenter", 1)
    assert (second.action, second.rung) == ("escalate", "R1")


def test_rungs_come_in_order_then_the_run_parks() -> None:
    gate = Gate(max_stall_cycles=1, expert_configured=False)
    gate.baseline(RED, ["a"])
    actions = [(d.action, d.rung) for d in (gate.judge(RED, ["a"]) for _ in range(4))]
    assert actions == [("escalate", "R1"), ("escalate", "R2"), ("escalate", "R3"), ("park", "R3")]
    assert gate.rungs_tried == ["R1", "R2", "R3"]


def test_r4_is_climbed_only_with_an_expert() -> None:
    gate = Gate(max_stall_cycles=1, expert_configured=True)
    gate.baseline(RED, ["a"])
    rungs = [gate.judge(RED, ["a"]).rung for _ in range(4)]
    assert rungs == ["R1", "R2", "R3", "R4"]
    assert gate.judge(RED, ["a"]).action == "park"


def test_with_escalation_off_the_stall_limit_ends_the_turn_incomplete() -> None:
    gate = Gate(max_stall_cycles=2, escalation=False)
    gate.baseline(RED, ["a"])
    assert gate.judge(RED, ["a"]).action == "reenter"
    assert gate.judge(RED, ["a"]).action == "incomplete"


def test_a_growing_unmet_set_is_a_stall_even_with_fewer_errors() -> None:
    gate = Gate()
    gate.baseline(RED, ["a", "b"])
    d = gate.judge(rep(tests="unmet", lint="unmet"), ["a"])
    assert (d.progress, d.stall, d.why) == (False, 1, "unmet set grew")


def test_progress_resets_the_stall_count() -> None:
    gate = Gate(max_stall_cycles=2)
    gate.baseline(RED, ["a", "b"])
    assert gate.judge(RED, ["a", "b"]).stall == 1
    assert gate.judge(RED, ["a"]).stall == 0
    assert gate.judge(RED, ["a"]).stall == 1


def test_without_a_precheck_the_first_check_is_the_baseline() -> None:
    gate = Gate()
    d = gate.judge(RED, ["a"])
    assert (d.action, d.stall, d.why) == ("reenter", 0, "first check")
