from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll, DenyAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

SAME = {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}


def run(tmp_path, approver, on_repeat):
    (tmp_path / "a.txt").write_text("a")
    with ScriptedServer({"responses": [SAME, SAME, SAME, {"content": "ok"}]}) as srv:
        env = {"CERVEAU_LIMITS__ON_REPEAT": f'"{on_repeat}"'}
        settings = load_settings(tmp_path, environ=env, user_config=tmp_path / "n")
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, approver=approver, provider=LlamaProvider(srv.url))
        out = s.engine.run("read")
        s.close()
    return out, rec


def test_repeat_stops_the_turn_at_three_by_default(tmp_path):
    out, rec = run(tmp_path, DenyAll(), "stop")
    assert out.reason == "repeat" and out.iterations == 3
    assert [e.payload["guard"] for e in rec.of("guard_tripped")] == ["repeat"]


def test_repeat_asks_the_person_when_configured_and_goes_on_if_allowed(tmp_path):
    out, rec = run(tmp_path, ApproveAll(), "ask")
    assert out.reason == "completed" and out.iterations == 4
    assert rec.of("approval_resolved")[0].payload["decision"] == "approved"


def test_repeat_asked_and_denied_stops(tmp_path):
    out, rec = run(tmp_path, DenyAll(), "ask")
    assert out.reason == "repeat"
    assert rec.of("approval_resolved")[0].payload["decision"] == "denied"
