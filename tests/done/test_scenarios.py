"""Scripted scenarios on a real tiny project with a real pytest gate, through the real CLI."""

from __future__ import annotations

from cerveau_tui.testing.cache_probe import is_summary
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import CALC_FIXED, TEST_CALC, ended, of, run_cli


def edit(path: str, old: str, new: str) -> dict:
    return {
        "tool_calls": [{"name": "edit_file", "arguments": {"path": path, "old": old, "new": new}}]
    }


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def test_the_model_fixes_the_code_and_the_seal_is_passed(project) -> None:
    ws = project()
    script = [edit("calc.py", "a - b", "a + b"), {"content": "Fixed add."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    checks = of(events, "check")
    assert [c["precheck"] for c in checks] == [True, False]
    assert checks[0]["unmet"] == ["tests"] and checks[1]["unmet"] == []
    end = ended(events)
    assert (end["reason"], end["verification"], end["unmet"]) == ("completed", "passed", [])
    assert (ws / "calc.py").read_text() == CALC_FIXED


def test_an_answer_with_unmet_criteria_reenters_with_the_report(project) -> None:
    ws = project()
    script = [
        {"content": "All done!"},
        edit("calc.py", "a - b", "a + b"),
        {"content": "Now fixed."},
    ]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        second_request = srv.requests[1]["messages"]
    told = second_request[-1]["content"]
    assert told.startswith("[harness]") and "FAILED tests/test_calc.py::test_add" in told
    assert ended(events)["verification"] == "passed"


def test_the_model_editing_the_test_to_pass_is_surfaced(project) -> None:
    ws = project()
    weakened = TEST_CALC.replace("== 3", "== -1")
    script = [write("tests/test_calc.py", weakened), {"content": "Tests pass now."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        told = srv.requests[2]["messages"][-1]["content"]
    touched = of(events, "touched_protected")
    assert touched and touched[0]["paths"] == ["tests/test_calc.py"]
    # Said once, by its own event (issue 22: the notice beside it showed it twice).
    assert "tests/test_calc.py" in touched[0]["text"]
    notices = of(events, "notice")
    # Never forbidden: the edit stays on disk. Never progress in silence: the ORIGINAL test is
    # run in a scratch copy, still fails, and the model is told so; the seal is not "passed".
    assert (ws / "tests/test_calc.py").read_text() == weakened
    assert any("with the originals tests still fail" in n["text"] for n in notices)
    assert "with the original versions it still fails" in told
    end = ended(events)
    assert end["touched_protected"] == ["tests/test_calc.py"]
    assert end["verification"] == "failed" and end["unmet"] == ["tests"]
    assert end["reason"] != "completed"


def test_a_stalled_model_climbs_the_rungs_in_order_then_parks_with_a_handoff(project) -> None:
    ws = project()
    # max_stall_cycles = 2 and no expert: 2 stalls per rung, R1..R3, then park = 8 answers.
    script = [{"content": f"I believe it is done ({i})."} for i in range(8)]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        # The rounds' requests: not a summary call a compaction may make (it continues the
        # conversation with its tools and one more question: loop/summarise.py).
        caps = [r["max_tokens"] for r in srv.requests if r.get("tools") and not is_summary(r)]
    assert [e["rung"] for e in of(events, "escalation")] == ["R1", "R2", "R3"]
    # R2 gives more room: every request after it carries a doubled cap.
    assert caps[:4] == [caps[0]] * 4 and caps[4:] == [caps[0] * 2] * 4
    parked = of(events, "parked")
    assert len(parked) == 1 and parked[0]["unmet"] == ["tests"]
    assert "## What is unmet\n- tests" in parked[0]["handoff"]
    end = ended(events)
    assert (end["reason"], end["verification"], end["unmet"]) == ("parked", "clean", ["tests"])
    assert (ws / ".cerveau" / "handoff.md").read_text() == parked[0]["handoff"]

    # A new session resumes from the handoff instead of restarting, and clears it once green.
    script = [edit("calc.py", "a - b", "a + b"), {"content": "Fixed."}]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "continue")
        first = srv.requests[0]["messages"]
    assert any("A previous session parked" in str(m.get("content")) for m in first)
    assert ended(events)["verification"] == "passed"
    assert not (ws / ".cerveau" / "handoff.md").exists()


def test_with_escalation_off_two_stalls_end_the_turn_incomplete(project) -> None:
    ws = project(extra_config="escalation = false\n")
    with ScriptedServer([{"content": "done"}, {"content": "done"}, {"content": "x"}]) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    end = ended(events)
    assert (end["reason"], end["unmet"]) == ("incomplete", ["tests"])
    assert not of(events, "escalation")


MULTI = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "from calc import add, mul, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
        "def test_sub():\n    assert sub(5, 2) == 3\n\n\ndef test_mul():\n    assert mul(2, 4) == 8\n"
    ),
}


def test_a_regression_after_near_green_is_rolled_back(project) -> None:
    ws = project(MULTI)
    near_green = MULTI["calc.py"].replace("a - b", "a + b", 1)  # add fixed: 2 failures left
    sprayed = "def add(a, b):\n    return 0\n\n\ndef sub(a, b):\n    return 0\n\n\ndef mul(a, b):\n    return 0\n"
    fixed = near_green.replace("a + b\n\n\ndef mul", "a - b\n\n\ndef mul").replace(
        "def mul(a, b):\n    return a + b", "def mul(a, b):\n    return a * b"
    )
    script = [
        write("calc.py", near_green),
        {"content": "add is fixed"},  # progress: the new best
        write("calc.py", sprayed),
        {"content": "simplified"},  # 3 failures, one new: sprayed
        write("calc.py", fixed),
        {"content": "all fixed"},
    ]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
        told = [m["content"] for m in srv.requests[4]["messages"] if m["role"] == "user"][-1]
    rollbacks = of(events, "rollback")
    assert len(rollbacks) == 1 and rollbacks[0]["paths"] == ["calc.py"]
    assert rollbacks[0]["best"] == [1, 2] and rollbacks[0]["errors"] == 3
    assert "rolled back" in told  # the model is told...
    assert "rolled back" in rollbacks[0]["text"]  # ...and the person, by the rollback's own line
    # The check right after the rollback sees the near-green state again.
    after = of(events, "check")[3]
    assert after["errors"] == 2
    assert ended(events)["verification"] == "passed"


def test_the_model_weakening_the_test_through_the_shell_is_surfaced_too(project) -> None:
    ws = project()
    cmd = "sed -i 's/== 3/== -1/' tests/test_calc.py"
    script = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": cmd}}]},
        {"content": "Passing."},
    ]
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    assert [t["paths"] for t in of(events, "touched_protected")] == [["tests/test_calc.py"]]
    assert ended(events)["touched_protected"] == ["tests/test_calc.py"]


def test_with_an_expert_configured_r4_consults_it_before_parking(project, tmp_path) -> None:
    with ScriptedServer([{"content": "Change `a - b` to `a + b` in calc.add."}]) as expert:
        ws = project()
        config = ws / ".cerveau" / "config.toml"
        # No model-written summary at compaction: this script answers the gate's rounds only,
        # and a summary request would take one of its entries.
        config.write_text(
            config.read_text()
            + f'\n[expert]\nserver_url = "{expert.url}"\n[context]\nsummarise = false\n'
        )
        script = [{"content": "done"}] * 8 + [
            edit("calc.py", "a - b", "a + b"),
            {"content": "Fixed."},
        ]
        with ScriptedServer(script) as srv:
            # An expert server named by the workspace's own config is a lowering (the session
            # would go elsewhere): headless, the person says so with the flag.
            _, events = run_cli(ws, srv.url, "make the tests pass", "--trust-workspace-config")
            told = [m["content"] for m in srv.requests[8]["messages"] if m["role"] == "user"][-1]
        asked = expert.requests[0]["messages"][-1]["content"]
    assert [e["rung"] for e in of(events, "escalation")] == ["R1", "R2", "R3", "R4"]
    assert "## What is unmet\n- tests" in asked
    assert "Change `a - b` to `a + b` in calc.add." in told
    assert ended(events)["verification"] == "passed"
