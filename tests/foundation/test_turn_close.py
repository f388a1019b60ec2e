from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.memory.store import MemoryStore
from cerveau_tui.memory.turn_close import curate, parse_distill
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def test_a_parse_failure_degrades_to_nothing():
    assert parse_distill('{"facts": ["cut off') == parse_distill("") == parse_distill("[]")
    assert parse_distill('{"facts": ["a"], "lessons": [1, "b"]}').lessons == ["b"]


def test_curate_keeps_specific_short_notes():
    assert curate(
        ["Tests run with python3 -m pytest -q", "ok", "It is a good project and nice"]
    ) == ["Tests run with python3 -m pytest -q"]


def test_memory_store_deduplicates_by_normalised_text(tmp_path):
    m = MemoryStore(tmp_path)
    assert m.add("fact", "Config lives in app/config.py")
    assert not m.add("fact", "config lives in  app/config.py.")
    assert m.recent() == [("fact", "Config lives in app/config.py")]


def test_turn_close_stores_notes_and_the_next_session_is_briefed(tmp_path):
    note = "The entry point is main.py and it reads settings.toml"
    script = {
        "responses": [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "main.py", "content": "print(1)\n"},
                    }
                ]
            },
            {"content": "done"},
            {"content": '{"facts": ["' + note + '"], "lessons": []}'},  # the distill
            {"content": "second session"},
        ]
    }
    with ScriptedServer(script) as srv:
        settings = load_settings(
            tmp_path, flags={"turn_close": True}, environ={}, user_config=tmp_path / "n"
        )
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, provider=LlamaProvider(srv.url))
        s.engine.run("write main.py")
        s.close()
        assert any("remembered" in e.payload["text"] for e in rec.of("notice"))
        s2 = build_session(settings, provider=LlamaProvider(srv.url))
        s2.engine.run("next")
        s2.close()
        last = srv.requests[-1]
    assert srv.requests[2]["max_tokens"] == 256 and "response_format" in srv.requests[2]
    assert note in str(last["messages"])
    assert last["messages"][0] == srv.requests[0]["messages"][0]  # the stable prefix did not move
