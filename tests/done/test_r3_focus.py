"""R3 narrows to the code under test the traceback points into, never to an unrelated last write
(issue 37: the failure named only the protected test file, R3 fell back to the last file written,
`other.py`, refused the real fix in `calc.py`, and the turn parked). Through the CLI."""

from __future__ import annotations

import json

from cerveau_tui.done.criteria import CriterionState, DoneSet, Report
from cerveau_tui.done.messages import focus_file
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import TEST_CALC, of, run_cli
from .test_scenarios import edit, write

# Raises inside calc.py: the traceback goes tests/test_calc.py -> calc.py.
CALC_RAISES = "def add(a, b):\n    return a + c\n"


def test_r3_narrows_to_the_file_the_traceback_points_into_not_the_last_write(project) -> None:
    ws = project(
        {"calc.py": CALC_RAISES, "tests/test_calc.py": TEST_CALC}, "max_stall_cycles = 1\n"
    )
    script = [write("other.py", "x = 1\n"), {"content": "done"}, {"content": "done"}]
    script += [{"content": "done"}, edit("calc.py", "a + c", "a + b"), {"content": "Fixed."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        told = srv.requests[4]["messages"][-1]["content"]
    r3 = of(events, "escalation")[2]
    assert r3["rung"] == "R3" and r3["change"] == "narrowed to one file and one error"
    assert "`calc.py`" in told and "other.py" not in told
    assert of(events, "turn_ended")[0]["verification"] == "passed"


def test_an_assert_in_the_test_file_narrows_to_the_module_it_imports(project) -> None:
    ws = project(extra_config="max_stall_cycles = 1\n")  # add subtracts: only the test is named
    script = [write("other.py", "x = 1\n"), {"content": "done"}, {"content": "done"}]
    script += [{"content": "done"}, edit("calc.py", "a - b", "a + b"), {"content": "Fixed."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        told = srv.requests[4]["messages"][-1]["content"]
    assert of(events, "escalation")[2]["change"] == "narrowed to one file and one error"
    assert "`calc.py`" in told and "other.py" not in told
    assert of(events, "turn_ended")[0]["verification"] == "passed"


def test_a_python_traceback_names_the_workspace_file_and_never_one_outside_it(tmp_path) -> None:
    (tmp_path / "calc.py").write_text(CALC_RAISES)
    outside = f'File "{json.__file__}", line 3, in loads'
    inside = f'File "{tmp_path / "calc.py"}", line 2, in add'
    report = Report({"tests": CriterionState.UNMET}, outputs={"tests": f"{outside}\n{inside}"})
    done = DoneSet(protected=("tests/**",))
    assert focus_file(tmp_path, done, report, ["other.py"]) == "calc.py"
    # Nothing in the workspace named: None (R3's round is read-only), whatever was written last.
    report.outputs["tests"] = outside
    assert focus_file(tmp_path, done, report, ["other.py"]) is None
