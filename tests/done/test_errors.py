"""Error ages and stuck detection: slow is not stalled."""

from __future__ import annotations

from cerveau_tui.adapters.python import PythonAdapter
from cerveau_tui.done.criteria import CriterionState, Report
from cerveau_tui.done.errors import ErrorAges, check_stuck, errors_of


def test_an_error_ages_one_cycle_per_check_it_survives() -> None:
    ages = ErrorAges()
    ages.update(["a", "b"])
    ages.update(["a"])
    ages.update(["a", "c"])
    assert ages.age("a") == 3
    assert ages.age("b") == 0
    assert ages.age("c") == 1


def test_an_error_that_returns_starts_again_at_one() -> None:
    ages = ErrorAges()
    ages.update(["a"])
    ages.update([])
    ages.update(["a"])
    assert ages.age("a") == 1


def test_the_oldest_error_comes_first_ties_in_first_seen_order() -> None:
    ages = ErrorAges()
    ages.update(["x", "y"])
    ages.update(["z", "y", "x"])
    assert ages.items() == [("x", 2), ("y", 2), ("z", 1)]
    assert ages.oldest() == "x"


def test_a_falling_error_count_is_not_stuck_even_when_slow() -> None:
    history = [["a", "b", "c", "d"], ["a", "b", "c"], ["a", "b"]]
    assert not check_stuck(history)


def test_the_same_error_set_turn_after_turn_is_stuck() -> None:
    assert check_stuck([["a", "b"], ["a", "b"]])


def test_errors_swapped_one_for_one_are_stuck() -> None:
    assert check_stuck([["a", "b"], ["a", "c"]])


def test_an_oscillating_count_is_judged_against_the_best_so_far() -> None:
    # 3, 2, 3, 2: against the previous cycle it would alternate forever; against the best it is
    # stuck from the second "2" on.
    assert check_stuck([["a", "b", "c"], ["a", "b"], ["a", "b", "c"], ["a", "c"]])


def test_one_cycle_alone_is_never_stuck() -> None:
    assert not check_stuck([["a"]])
    assert not check_stuck([])


def test_errors_are_read_only_from_unmet_criteria_and_named_after_them() -> None:
    report = Report(
        {"tests": CriterionState.UNMET, "other": CriterionState.MET},
        outputs={
            "tests": "FAILED test_a.py::test_one - assert 1 == 2\nFAILED test_a.py::test_two\n",
            "other": "FAILED test_b.py::test_x\n",
        },
    )
    assert errors_of(report, PythonAdapter()) == [
        "tests: FAILED test_a.py::test_one",
        "tests: FAILED test_a.py::test_two",
    ]
