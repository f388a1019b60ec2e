"""Red precheck: a gate already green is said, and the person is asked whether to go on, when the
task aims at what the check measures (issue 33: "do it" no longer raises the question; the rule
is in done/precheck.py and tests/done/test_check_step.py)."""

import sys
import threading

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApprovalDecision, BusApprover
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def green_project(tmp_path):
    (tmp_path / ".cerveau").mkdir()
    (tmp_path / ".cerveau/config.toml").write_text(
        f'[[done.criteria]]\nname = "ok"\ncommand = "{sys.executable} -c pass"\n'
    )
    return tmp_path


def run_with_answer(tmp_path, answer):
    ws = green_project(tmp_path)
    with ScriptedServer({"responses": [{"content": "done"}]}) as srv:
        # The criteria are commands: a workspace config applies them once trusted.
        settings = load_settings(ws, environ={}, user_config=tmp_path / "n", trust_workspace=True)
        bus = Emitter()
        rec = Recorder(bus)
        approver = BusApprover(bus, timeout_s=30)

        def person(ev):
            if ev.type == "approval_requested":
                threading.Thread(
                    target=approver.resolve,
                    args=(ev.payload["request_id"], ApprovalDecision(answer)),
                ).start()

        bus.subscribe(person)
        s = build_session(settings, bus=bus, approver=approver, provider=LlamaProvider(srv.url))
        out = s.engine.run("fix the bug")
        s.close()
        return out, rec, len(srv.requests)


def test_the_person_says_no_and_the_turn_stops_before_the_model_is_called(tmp_path):
    out, rec, model_calls = run_with_answer(tmp_path, "denied")
    asked = rec.of("approval_requested")[0].payload
    assert asked["tool"] == "question" and "already passes" in asked["summary"]
    assert out.reason == "stopped" and model_calls == 0


def test_the_person_says_yes_and_the_turn_goes_on(tmp_path):
    out, rec, model_calls = run_with_answer(tmp_path, "approved")
    assert out.reason == "completed" and model_calls == 1
