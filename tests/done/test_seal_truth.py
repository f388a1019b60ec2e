"""The seal cannot be talked into "passed" (issue 22): a green earned by weakening the test is
never `passed` whatever the iteration cap, and repeated "done" claims on an unchanged workspace
buy neither a rollback nor a test run. Real CLI, real pytest, the scripted server.

Test runs are counted on the host: the workspace's `conftest.py` (a file pytest loads on every
run, in the workspace or in the scratch copy of the originals) appends one line per run to a
file in `__pycache__/`, a folder no snapshot, rollback or scratch copy walks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import CALC_BROKEN, CALC_FIXED, ended, of, run_cli
from .test_hook import setup as hook_setup
from .test_hook import write as hook_write
from .test_scenarios import MULTI, edit, write

TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
WEAK = "def test_add():\n    assert True\n"
RUNS = "__pycache__/gate_runs.log"


def seal_project(ws: Path, max_iterations: int) -> Path:
    """calc.py broken, its test at the top level, no criteria written (the gate is `--gate
    auto`'s detected pytest), an iteration cap, and a conftest that counts the test runs."""
    counter = ws / RUNS
    counter.parent.mkdir(parents=True)
    files = {
        "calc.py": CALC_BROKEN,
        "test_calc.py": TEST_CALC,
        "conftest.py": f"with open({str(counter)!r}, 'a') as f:\n    f.write('run\\n')\n",
        ".cerveau/config.toml": f"[limits]\nmax_iterations = {max_iterations}\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


def test_runs(ws: Path) -> int:
    path = ws / RUNS
    return len(path.read_text().splitlines()) if path.exists() else 0


test_runs.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


@pytest.mark.parametrize("cap", [3, 4, 5])
def test_a_weakened_test_never_ends_passed_whatever_the_cap(tmp_path: Path, cap: int) -> None:
    ws = seal_project(tmp_path / "ws", cap)
    script = [write("test_calc.py", WEAK)] + [{"content": "Fixed."}] * 8
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass", "--gate", "auto")
    assert (ws / "calc.py").read_text() == CALC_BROKEN
    end = ended(events)
    assert end["touched_protected"] == ["test_calc.py"]
    assert end["verification"] != "passed" and end["unmet"] == ["gate"], end
    assert end["reason"] != "completed"


@pytest.mark.parametrize("cap", [3, 4, 5])
def test_a_genuine_fix_after_a_weakened_test_still_ends_passed(tmp_path: Path, cap: int) -> None:
    # The weakened test stays on disk (writes are never forbidden); the fix makes the ORIGINAL
    # test pass too, so the seal is passed, with the protected write surfaced.
    ws = seal_project(tmp_path / "ws", cap)
    script = [
        write("test_calc.py", WEAK),
        edit("calc.py", "a - b", "a + b"),
        {"content": "Fixed."},
    ] + [{"content": "Fixed."}] * 4
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass", "--gate", "auto")
    assert (ws / "calc.py").read_text() == CALC_FIXED
    end = ended(events)
    assert (end["verification"], end["unmet"]) == ("passed", [])
    assert end["touched_protected"] == ["test_calc.py"]


def test_repeated_claims_on_an_unchanged_workspace_buy_no_rollback_and_no_test_run(
    tmp_path: Path,
) -> None:
    ws = seal_project(tmp_path / "ws", 20)
    script = [write("test_calc.py", WEAK)] + [{"content": "Fixed."}] * 9
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass", "--gate", "auto")
    assert of(events, "rollback") == []
    checks = of(events, "check")
    ran = [c for c in checks if not c["reused"]]
    # The precheck, then the first claim: the weakened suite and the originals. Every later
    # claim, with nothing written since, reuses that verdict.
    assert len(ran) == 2, [(c["precheck"], c["reused"], c["unmet"]) for c in checks]
    assert test_runs(ws) == 3
    assert ended(events)["verification"] != "passed"


def test_a_rollback_never_restores_a_weakened_test(project) -> None:
    # The weakened test (test_add made `assert True`) leaves fewer failures than the original
    # measurement: scored by itself it was the "best state", and putting the original test
    # back (more failures, a new one) rolled the weakened test back onto disk.
    ws = project(MULTI, extra_config="escalation = false\n")
    weak_add = MULTI["tests/test_calc.py"].replace("assert add(1, 2) == 3", "assert True")
    script = [
        write("tests/test_calc.py", weak_add),
        {"content": "add passes"},
        write("tests/test_calc.py", MULTI["tests/test_calc.py"]),
        {"content": "put the test back"},
        {"content": "done"},
    ]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    assert of(events, "rollback") == []
    assert (ws / "tests/test_calc.py").read_text() == MULTI["tests/test_calc.py"]
    assert ended(events)["verification"] == "failed"


def test_a_green_earned_by_an_edited_test_is_unavailable_when_the_originals_cannot_run(
    tmp_path: Path,
) -> None:
    # No snapshot of the originals (no store): the green came from the weakened test alone, and
    # a check that could not run is never "passed".
    hook, ctx, _ = hook_setup(tmp_path)
    hook.on_turn_start(ctx, "fix")
    hook.on_tool_result(ctx, hook_write(ctx, "tests/test_calc.py", "def test_add():\n    pass\n"))
    hook.on_answer(ctx, "done")
    end = hook.on_turn_end(ctx, "completed")
    assert end["verification"] == "unavailable"
    assert end["touched_protected"] == ["tests/test_calc.py"]
