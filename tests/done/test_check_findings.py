"""What a check found, read from its output (done/findings.py), and the rule that says when a green
check is worth a question (done/precheck.py): pure functions, no process."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.context.pack import estimate_tokens
from cerveau_tui.done.criteria import Criterion, DoneSet
from cerveau_tui.done.findings import FINDINGS_TOKENS, Findings, for_the_model, read_output
from cerveau_tui.done.precheck import aims_at_check
from cerveau_tui.protocol import CheckPayload
from cerveau_tui.protocol.describe import check_line

PYTEST_RED = """\
FF.                                                                      [100%]
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(1, 2) == 3
E       assert -1 == 3
E        +  where -1 = add(1, 2)

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert -1 == 3
FAILED tests/test_calc.py::test_sub - assert 3 == -1
2 failed, 1 passed in 0.03s
"""

PYTEST_COLLECTION = """\
==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_calc.py ______________________
ImportError while importing test module '/ws/tests/test_calc.py'.
tests/test_calc.py:1: in <module>
    from calc import add
E   ImportError: cannot import name 'add' from 'calc'
=========================== short test summary info ============================
ERROR tests/test_calc.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.08s
"""

UNITTEST_RED = """\
F.
======================================================================
FAIL: test_add (tests.test_calc.T.test_add)
----------------------------------------------------------------------
Traceback (most recent call last):
AssertionError: -1 != 3

----------------------------------------------------------------------
Ran 2 tests in 0.001s

FAILED (failures=1)
"""

DONE = DoneSet(criteria=(Criterion("tests", "python -m pytest -q"),))


def test_pytest_failing_tests_are_read_by_name_and_counted() -> None:
    found = read_output(PYTEST_RED)
    assert found.failing == ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"]
    assert found.failed == 2 and found.cause == ""
    assert found.first_errors[0] == "assert -1 == 3"


def test_a_collection_error_is_the_cause_not_a_count_of_zero() -> None:
    found = read_output(PYTEST_COLLECTION)
    assert found.cause.startswith("cannot collect tests/test_calc.py")
    assert "ImportError" in found.cause


def test_a_missing_module_is_the_cause() -> None:
    found = read_output("/usr/bin/python3: No module named pytest\n")
    assert found.cause == "/usr/bin/python3: No module named pytest"


def test_unittest_failures_are_read_by_name() -> None:
    found = read_output(UNITTEST_RED)
    assert found.failing == ["tests.test_calc.T.test_add"] and found.failed == 1


def test_the_models_findings_stay_within_a_few_hundred_tokens() -> None:
    many = Findings(
        failing=[f"tests/test_mod_{i}.py::test_case_number_{i}" for i in range(400)],
        failed=400,
        first_errors=[f"assert {'x' * 200} == {i}" for i in range(100)],
    )
    text = for_the_model("python -m pytest -q", many)
    assert estimate_tokens(text) <= FINDINGS_TOKENS
    assert "tests/test_mod_0.py::test_case_number_0" in text and "more" in text


def test_the_models_findings_name_the_failing_tests_and_the_first_error() -> None:
    text = for_the_model("python -m pytest -q", read_output(PYTEST_RED))
    assert "tests/test_calc.py::test_add" in text and "tests/test_calc.py::test_sub" in text
    assert "assert -1 == 3" in text and "2 failing" in text


def test_a_red_check_is_a_line_as_loud_as_a_green_one() -> None:
    red = CheckPayload(
        precheck=True,
        command="pytest -q",
        state="failed",
        failing=["t.py::a", "t.py::b"],
        failed=2,
        unmet=["tests"],
    )
    text, level = check_line(red) or ("", "")
    assert level == "error" and "2 failing: t.py::a, t.py::b" in text
    green = check_line(CheckPayload(precheck=True, command="pytest -q", state="passed"))
    assert green is not None and green[1] == "success"


def test_a_collection_error_line_says_the_cause() -> None:
    p = CheckPayload(command="pytest", state="failed", cause="cannot collect t.py", unmet=["t"])
    line = check_line(p)
    assert line is not None and "cannot collect t.py" in line[0] and line[1] == "error"


def test_a_check_reused_at_the_turns_end_is_no_news() -> None:
    assert check_line(CheckPayload(reused=True, state="passed", command="x")) is None


def test_tasks_that_do_not_aim_at_the_check() -> None:
    for task in ("say hello", "list the files", "explain calc.py", "write a README"):
        assert not aims_at_check(task, DONE), task


def test_tasks_that_aim_at_the_check() -> None:
    for task in ("fix the failing test", "make the tests pass", "there is a bug in add"):
        assert aims_at_check(task, DONE), task


def test_a_task_naming_a_criterion_aims_at_it() -> None:
    done = DoneSet(criteria=(Criterion("mypy", "mypy ."),))
    assert aims_at_check("run mypy and clean up", done)


def test_the_models_findings_are_a_few_hundred_tokens_by_the_models_own_tokenizer() -> None:
    import pytest

    from cerveau_tui.context.tokens import TokenCounter

    gguf = Path.home() / ".cache/cerveau/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    if not gguf.exists():
        pytest.skip("the embedded model's GGUF is not on this machine")
    counter = TokenCounter(None, str(gguf))
    assert counter.source == "gguf-bpe"
    many = Findings(
        failing=[
            f"tests/test_more_{i}.py::TestThing::test_case_{i}[param-{i}]" for i in range(300)
        ],
        failed=300,
        first_errors=[
            f"AssertionError: assert {i} == calc.add({i}, -{i}) + 0x{i:04x}" for i in range(80)
        ],
    )
    # Bounded by the counter it is given: the session's own, or the estimate by default.
    assert (
        counter.count(for_the_model("python -m pytest -q", many, counter.count)) <= FINDINGS_TOKENS
    )
    assert counter.count(for_the_model("python -m pytest -q", many)) <= 2 * FINDINGS_TOKENS
