"""The done check as a step of an interactive session (issue 33): seen, its findings handed to
the model first, run only when it can tell something, asking only what the person can see, and
stopped by a stop. Real sessions on real tiny projects, the scripted llama-server capturing what
the model received; the stop is verified from the host side (the process, a marker file)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApprovalDecision, BusApprover
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.proc_scan import sleeping
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import CALC_BROKEN, CALC_FIXED, TEST_CALC, ended, make_project, of, run_cli

TEST_TWO = TEST_CALC + "\n\ndef test_add_zero():\n    assert add(0, 5) == 5\n"


def pytest_project(ws: Path, calc: str) -> Path:
    ws.mkdir(exist_ok=True)
    return make_project(ws, {"calc.py": calc, "tests/test_calc.py": TEST_TWO})


def command_project(ws: Path, command: str) -> Path:
    ws.mkdir(exist_ok=True)
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau/config.toml").write_text(
        f'[[done.criteria]]\nname = "ok"\ncommand = "{command}"\n'
    )
    return ws


class Run:
    """One session over `ws` with a scripted server; `answer`: what the person says to a
    question (None: nobody answers)."""

    def __init__(
        self, tmp_path: Path, ws: Path, script: list[dict[str, Any]], answer: str | None = None
    ) -> None:
        self.srv = ScriptedServer({"responses": script})
        self.srv.__enter__()
        settings = load_settings(ws, environ={}, user_config=tmp_path / "n", trust_workspace=True)
        self.bus = Emitter()
        self.rec = Recorder(self.bus)
        self.approver = BusApprover(self.bus, timeout_s=30 if answer else 0.5)
        if answer is not None:

            def person(ev: Any) -> None:
                if ev.type == "approval_requested":
                    threading.Thread(
                        target=self.approver.resolve,
                        args=(ev.payload["request_id"], ApprovalDecision(answer)),  # type: ignore[arg-type]
                    ).start()

            self.bus.subscribe(person)
        self.session = build_session(
            settings, bus=self.bus, approver=self.approver, provider=LlamaProvider(self.srv.url)
        )

    def close(self) -> None:
        self.session.close()
        self.srv.__exit__(None, None, None)

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e.payload for e in self.rec.of(type_)]


# --- what the check found is the model's first fact ------------------------------------------


def test_a_red_precheck_names_the_failing_tests_in_the_first_request(tmp_path: Path) -> None:
    ws = pytest_project(tmp_path / "ws", CALC_BROKEN)
    run = Run(tmp_path, ws, [{"content": "looking"}] * 6)
    try:
        run.session.engine.run("look at the code")
        first = run.srv.requests[0]["messages"]
    finally:
        run.close()
    system = [m for m in first if m["role"] == "system"]
    after = [m for m in first if m["role"] != "system"]
    said = "\n".join(str(m.get("content")) for m in after)
    assert "tests/test_calc.py::test_add" in said and "assert -1 == 3" in said
    # After the stable prefix: the system message (the server's cached prefix) holds none of it.
    assert all("test_calc.py::test_add" not in str(m.get("content")) for m in system)


def test_the_check_event_carries_command_state_and_failing_names_when_red(project) -> None:
    ws = project()
    script = [{"tool_calls": [{"name": "edit_file", "arguments": {
        "path": "calc.py", "old": "a - b", "new": "a + b"}}]}, {"content": "Fixed add."}]  # fmt: skip
    with ScriptedServer(script) as srv:
        _, events = run_cli(ws, srv.url, "make the tests pass")
    red, green = of(events, "check")
    assert red["state"] == "failed" and red["failing"] == ["tests/test_calc.py::test_add"]
    assert red["failed"] == 1 and "pytest" in red["command"]
    assert green["state"] == "passed" and green["failing"] == []
    started = of(events, "check_started")
    assert len(started) == 2 and started[0]["command"] == red["command"]
    end = ended(events)
    assert (end["verification"], end["unmet"]) == ("passed", [])


# --- run it when it can tell something -------------------------------------------------------


def test_an_unchanged_tree_is_not_checked_again(tmp_path: Path) -> None:
    ws = pytest_project(tmp_path / "ws", CALC_FIXED)
    run = Run(tmp_path, ws, [{"content": "hello"}, {"content": "hello again"}])
    try:
        run.session.engine.run("say hello")
        run.session.engine.run("say hello again")
    finally:
        run.close()
    prechecks = [c for c in run.of("check") if c["precheck"]]
    assert [c["reused"] for c in prechecks] == [False, True]
    assert len(run.of("check_started")) == 1 and prechecks[1]["state"] == "passed"


def test_an_edited_tree_is_checked_again(tmp_path: Path) -> None:
    ws = pytest_project(tmp_path / "ws", CALC_FIXED)
    run = Run(tmp_path, ws, [{"content": "hello"}, {"content": "hello again"}])
    try:
        run.session.engine.run("say hello")
        (ws / "calc.py").write_text(CALC_BROKEN)  # the person edits between turns
        time.sleep(0.3)  # the watch's event (its scan falls back to a walk when it must)
        run.session.engine.run("say hello again")
    finally:
        run.close()
    assert len(run.of("check_started")) == 2
    assert [c["state"] for c in run.of("check") if c["precheck"]] == ["passed", "failed"]


def test_a_green_check_and_a_turn_not_aimed_at_it_raise_no_question(tmp_path: Path) -> None:
    ws = command_project(tmp_path / "ws", f"{sys.executable} -c pass")
    run = Run(tmp_path, ws, [{"content": "hello"}], answer="denied")
    try:
        out = run.session.engine.run("say hello")
    finally:
        run.close()
    assert run.of("approval_requested") == []
    assert out.reason == "completed" and len(run.srv.requests) == 1


def test_a_yes_to_the_green_question_holds_for_the_session(tmp_path: Path) -> None:
    ws = command_project(tmp_path / "ws", f"{sys.executable} -c pass")
    run = Run(tmp_path, ws, [{"content": "done"}, {"content": "done"}], answer="approved")
    try:
        run.session.engine.run("fix the bug")
        run.session.engine.run("fix the other bug")
    finally:
        run.close()
    assert len(run.of("approval_requested")) == 1


def test_a_question_that_times_out_says_no_answer_in_the_chat_and_the_log(tmp_path: Path) -> None:
    ws = command_project(tmp_path / "ws", f"{sys.executable} -c pass")
    run = Run(tmp_path, ws, [{"content": "done"}], answer=None)  # nobody answers (0.5 s)
    try:
        out = run.session.engine.run("fix the bug")
    finally:
        run.close()
    assert [r["by"] for r in run.of("approval_resolved")] == ["timeout"]
    assert out.reason == "stopped" and "no answer" in out.message
    assert "person's word" not in out.message
    assert any("no answer" in n["text"] for n in run.of("notice"))


# --- stop means stop -------------------------------------------------------------------------

SLEEP = "7.4321"  # a duration no other process on the host sleeps for: found in /proc by it


def test_esc_esc_during_the_precheck_kills_it_and_asks_nothing(tmp_path: Path) -> None:
    ws = command_project(tmp_path / "ws", f"sleep {SLEEP}; touch marker")
    run = Run(tmp_path, ws, [{"content": "done"}], answer="approved")
    seen: list[int] = []

    def stop_when_started(ev: Any) -> None:
        # From the host side: once the check's own process is seen running, Esc Esc.
        if ev.type == "turn_started":

            def later() -> None:
                deadline = time.monotonic() + 5
                while not sleeping(SLEEP) and time.monotonic() < deadline:
                    time.sleep(0.05)
                seen.extend(sleeping(SLEEP))
                run.session.engine.interrupt()

            threading.Thread(target=later).start()

    run.bus.subscribe(stop_when_started)
    try:
        out = run.session.engine.run("fix the failing test")  # aimed: old code asked after
        gone = sleeping(SLEEP)
        time.sleep(float(SLEEP) + 0.5)  # past the sleep: the marker would be written by now
    finally:
        run.close()
    assert seen, "the check's sleep was never seen running"
    assert gone == [] and not (ws / "marker").exists()
    assert out.reason == "interrupted"
    assert run.of("approval_requested") == [] and run.srv.requests == []
    assert [c["state"] for c in run.of("check")] == ["interrupted"]
