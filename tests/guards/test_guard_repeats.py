"""Repeats with results: the same call after the same answer, not the same call after news."""

from __future__ import annotations

from cerveau_tui.loop.guards.repeats import is_repeat_with_results

POLL = ("bash", {"command": "python3 poll.py"})


def test_the_third_identical_call_after_identical_results_is_a_repeat() -> None:
    done = [("bash", {"command": "python3 poll.py"}, "error\n[exit code 1]")] * 2
    assert is_repeat_with_results(done, POLL, 3)


def test_polling_whose_output_changes_is_not_a_repeat() -> None:
    done = [
        ("bash", {"command": "python3 poll.py"}, "3/10 done\n[exit code 0]"),
        ("bash", {"command": "python3 poll.py"}, "5/10 done\n[exit code 0]"),
    ]
    assert not is_repeat_with_results(done, POLL, 3)


def test_a_different_call_in_between_breaks_the_run() -> None:
    done = [
        ("bash", {"command": "python3 poll.py"}, "x"),
        ("read_file", {"path": "a"}, "x"),
        ("bash", {"command": "python3 poll.py"}, "x"),
    ]
    assert not is_repeat_with_results(done, POLL, 3)


def test_argument_order_does_not_make_calls_different() -> None:
    done = [("edit_file", {"path": "a", "old": "x", "new": "y"}, "not found")] * 2
    assert is_repeat_with_results(done, ("edit_file", {"new": "y", "old": "x", "path": "a"}), 3)


def test_too_few_calls_are_not_a_repeat() -> None:
    assert not is_repeat_with_results([("bash", {"command": "python3 poll.py"}, "x")], POLL, 3)
