"""Rounds lost, and to what (loop/guards/lost_rounds.py): each cause on events made for it, one
cause a round, and a failure copied from an earlier turn told apart from one repeated within."""

from __future__ import annotations

from typing import Any

from cerveau_tui.loop.guards.lost_rounds import CAUSES, count_lost


def _ev(type_: str, **payload: Any) -> dict[str, Any]:
    return {"type": type_, "payload": payload}


def _round(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return [_ev("iteration_started", iteration=1), *events]


def _call(cid: str, name: str = "bash", via: str = "constrained", **args: Any) -> list[dict]:
    return [_ev("tool_call", call_id=cid, name=name, arguments=args, via=via)]


def _result(cid: str, status: str = "failed", **extra: Any) -> dict[str, Any]:
    return _ev("tool_result", call_id=cid, name="bash", ok=status == "done", status=status, **extra)


def _ended(reason: str) -> dict[str, Any]:
    return _ev("turn_ended", reason=reason, iterations=1)


def test_each_cause_is_counted_from_its_own_events() -> None:
    cut = "commit_plan cut off at 256 tokens; the retry may take 512 tokens"
    turn = [
        _ev("turn_started", input="fix it"),
        *_round(_ev("guard_tripped", guard="truncation", reason=cut, iteration=1, told="")),
        *_round(_ev("guard_tripped", guard="truncation", reason=cut, iteration=2, told="")),
        *_round(*_call("a", command="sleep 99"), _result("a", output="[killed: timed out]")),
        *_round(*_call("b", command=""), _result("b", error_class="args")),
        *_round(_ev("error", message="no reply", error_class="deadline")),
        *_round(*_call("c", command="ls"), _result("c", "done")),
        _ended("max_iterations"),
    ]
    got = count_lost([turn])
    assert got.rounds == 6 and got.turns == 1 and got.ended == ["max_iterations"]
    assert dict(got.lost) == {
        "truncated": 1,
        "truncation_repeat": 1,
        "timeout": 2,
        "refused_action": 1,
    }


def test_a_failure_copied_from_an_earlier_turn_is_not_one_repeated_within() -> None:
    fail = [*_call("1", command="python3 t.py"), _result("1")]
    first = [
        *_round(*fail),
        *_round(*_call("2", command="python3 t.py"), _result("2")),
        _ended("x"),
    ]
    again = [*_round(*_call("3", command="python3 t.py"), _result("3")), _ended("repeat")]
    got = count_lost([first, again])
    assert got.lost["copied_failure"] == 1 and got.rounds == 3


def test_a_round_has_one_cause_the_first_in_order() -> None:
    turn = [
        *_round(*_call("1", command="x"), _result("1", "guarded")),
        *_round(*_call("2", command="y"), _result("2", output="[killed: timed out]")),
        _ended("repeat"),
    ]
    before = [*_round(*_call("0", command="x"), _result("0")), _ended("repeat")]
    got = count_lost([before, turn])
    assert got.lost["copied_failure"] == 1 and got.lost["repeat_stop"] == 0
    assert sum(got.lost.values()) == 2 and got.lost["timeout"] == 1
    assert CAUSES.index("timeout") < CAUSES.index("copied_failure")


def test_the_persons_calls_and_a_native_refusal_are_no_lost_round() -> None:
    turn = [
        *_round(*_call("p", via="person", command="ls"), _result("p")),
        *_round(*_call("n", via="native", command=""), _result("n", error_class="args")),
        _ev("check", passed=False),
        _ended("completed"),
    ]
    got = count_lost([turn])
    assert sum(got.lost.values()) == 0 and got.checks == 1
    assert "done check ran 1x" in got.line()


def test_a_command_that_ran_and_failed_is_no_refused_action() -> None:
    """bash reports a non-zero exit with error class `args`: the command ran, nothing refused it."""
    turn = [
        *_round(*_call("r", command="test_add"), _result("r", error_class="args", exit_code=127)),
        _ended("max_iterations"),
    ]
    assert count_lost([turn]).lost["refused_action"] == 0


def test_a_turn_killed_before_its_end_loses_its_last_round_to_timeout() -> None:
    turn = [*_round(*_call("a", command="ls"), _result("a", "done")), *_round()]
    got = count_lost([turn])
    assert got.ended == [""] and dict(got.lost) == {"timeout": 1} and got.rounds == 2


def test_a_reply_cut_for_repeating_itself_is_a_round_lost_to_the_cut() -> None:
    said = "repeating: a span of 16 characters x 30"
    turn = [
        _ev("turn_started", input="write a test file"),
        *_round(_ev("guard_tripped", guard="repetition", reason=said, iteration=1, told="")),
        _ended("completed"),
    ]
    assert dict(count_lost([turn]).lost) == {"repetition_cut": 1}
