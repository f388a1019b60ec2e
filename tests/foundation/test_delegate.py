from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def test_explore_runs_a_read_only_child_and_reports_what_it_read(tmp_path):
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    script = {
        "responses": [
            {"tool_calls": [{"name": "explore", "arguments": {"task": "what is the answer?"}}]},
            # the child's rounds: one read, one attempted write (not in its registry), then a conclusion
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "x.txt", "content": "no"}}
                ]
            },
            {"content": "The answer is 42."},
            # the parent again
            {"content": "42"},
        ]
    }
    with ScriptedServer(script) as srv:
        settings = load_settings(
            tmp_path, flags={"delegate": True}, environ={}, user_config=tmp_path / "n"
        )
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, provider=LlamaProvider(srv.url))
        try:
            out = s.engine.run("use explore")
        finally:
            s.close()
        child_tools, parent_tools = srv.requests[1]["tools"], srv.requests[0]["tools"]
    assert out.reason == "completed"
    # The parent's tools are SENT, byte for byte (its cached prefix, issue 36); only the reading
    # ones RUN: structural, the others are absent from the child's registry.
    assert child_tools == parent_tools
    assert s.engine.read_only_child(Emitter(), s.engine.limits).registry.names() == [
        "read_file",
        "list_files",
        "search",
    ]
    assert not (tmp_path / "x.txt").exists()
    result = [e.payload for e in rec.of("tool_result") if e.payload["name"] == "explore"][0]
    assert "The answer is 42." in result["output"] and "Read: notes.txt" in result["output"]
    finished = [e.payload for e in rec.of("delegated") if e.payload["state"] == "finished"][0]
    assert finished["read"] == ["notes.txt"] and finished["unwritten"] == ["x.txt"]


def test_explore_is_not_offered_unless_enabled(tmp_path):
    with ScriptedServer({"responses": [{"content": "x"}]}) as srv:
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "n")
        s = build_session(settings, provider=LlamaProvider(srv.url))
        s.close()
    assert "explore" not in s.engine.registry


def test_discussion_mode_keeps_the_registry_and_refuses_at_dispatch(tmp_path):
    """The tools sent are the prompt's prefix (issue 36): the switch refuses calls instead
    (tests/foundation/test_prefix_kept.py runs it)."""
    with ScriptedServer({"responses": [{"content": "x"}]}) as srv:
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "n")
        s = build_session(settings, provider=LlamaProvider(srv.url))
        full = set(s.engine.registry.names())
        s.set_discuss(True)
        assert set(s.engine.registry.names()) == full and s.settings.discuss
        s.set_discuss(False)
        assert set(s.engine.registry.names()) == full and not s.settings.discuss
        s.close()
