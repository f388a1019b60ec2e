import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.session.rewind import RewindError
from cerveau_tui.testing.scripted_server import ScriptedServer


def session_for(tmp_path, script, environ=None):
    srv = ScriptedServer(script).start()
    settings = load_settings(tmp_path, environ=environ or {}, user_config=tmp_path / "none.toml")
    bus = Emitter()
    rec = Recorder(bus)
    return srv, build_session(settings, bus=bus, provider=LlamaProvider(srv.url)), rec


def test_undo_restores_edited_and_removes_created_files(tmp_path):
    """Undo is a rewind of the code to the last turn's point (session/rewind/)."""
    (tmp_path / "a.txt").write_text("original\n")
    script = {
        "responses": [
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {"path": "a.txt", "old": "original", "new": "changed"},
                    }
                ]
            },
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "new.txt", "content": "n"}}
                ]
            },
            {"content": "done"},
        ]
    }
    srv, s, rec = session_for(tmp_path, script)
    try:
        s.engine.run("change things")
        assert (tmp_path / "a.txt").read_text() == "changed\n"
        result = s.rewinder.rewind_last_turn()
    finally:
        s.close()
        srv.stop()
    assert (tmp_path / "a.txt").read_text() == "original\n"
    assert not (tmp_path / "new.txt").exists()
    assert (result.restored, result.removed) == (["a.txt"], ["new.txt"])
    said = rec.of("rewound")[0].payload
    assert (said["restored"], said["removed"], said["mode"]) == (["a.txt"], ["new.txt"], "code")
    assert "rewound the workspace's files" in s.engine.history[-1]["content"]


def test_undo_puts_back_what_a_command_changed_too(tmp_path):
    """The old undo log reported a command's changes as not restorable; a rewind restores them."""
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "bash", "arguments": {"command": "echo x > made_by_shell.txt"}}
                ]
            },
            {"content": "done"},
        ]
    }
    srv, s, rec = session_for(tmp_path, script)
    s.engine.policy = None  # this test is about undo, not the boundary: let the command run
    try:
        s.engine.run("shell")
        assert (tmp_path / "made_by_shell.txt").exists()
        result = s.rewinder.rewind_last_turn()
    finally:
        s.close()
        srv.stop()
    assert result.removed == ["made_by_shell.txt"]
    assert not (tmp_path / "made_by_shell.txt").exists()


def test_nothing_to_undo_says_so(tmp_path):
    srv, s, rec = session_for(tmp_path, {"responses": []})
    try:
        with pytest.raises(RewindError, match="no turn to rewind"):
            s.rewinder.rewind_last_turn()
    finally:
        s.close()
        srv.stop()


def test_an_approved_write_outside_the_workspace_runs(tmp_path):
    from cerveau_tui.loop.approver import ApproveAll

    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.txt"
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": str(outside), "content": "o"}}
                ]
            },
            {"content": "done"},
        ]
    }
    with ScriptedServer(script) as srv:
        settings = load_settings(ws, environ={}, user_config=tmp_path / "n")
        s = build_session(settings, approver=ApproveAll(), provider=LlamaProvider(srv.url))
        out = s.engine.run("write outside")
        s.close()
    assert out.reason == "completed" and outside.read_text() == "o"


def test_compact_keeps_the_last_rounds_behind_a_resume_brief(tmp_path):
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": f"f{i}.txt", "content": str(i)}}
                ]
            }
            for i in range(4)
        ]
        + [{"content": "done"}]
    }
    srv, s, rec = session_for(tmp_path, script, {"CERVEAU_CONTEXT__SUMMARISE": "false"})
    try:
        s.engine.run("write four files")
        dropped = s.engine.compact(keep_rounds=2)
    finally:
        s.close()
        srv.stop()
    # Issue 12: the person's compact compacts the WINDOW; the stored history keeps everything.
    # Issue 36: the kept rounds come first, byte-identical, and the brief after them.
    window = s.engine.loop_state.window
    brief = window.frozen[window.block_start]["content"]
    assert dropped == 4 and "write four files" in brief and "f0.txt" in brief
    assert s.engine.history[0] == {"role": "user", "content": "write four files"}
    kept = window.frozen[: window.block_start]
    assert kept == s.engine.history[-len(kept) :]
    assert kept[0]["role"] == "assistant" and kept[-1]["content"] == "done"
    assert rec.of("compacted")[-1].payload["reason"] == "person"


def test_the_resume_brief_carries_the_plan_and_what_failed(tmp_path):
    script = {
        "responses": [
            {
                "tool_calls": [
                    {
                        "name": "commit_plan",
                        "arguments": {
                            "steps": [{"id": "s1", "title": "Build the parser", "files": ["p.py"]}]
                        },
                    }
                ]
            },
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.py"}}]},
            {"content": "done"},
        ]
    }
    srv, s, rec = session_for(tmp_path, script, {"CERVEAU_CONTEXT__SUMMARISE": "false"})
    try:
        s.engine.run("parse things")
        s.engine.compact(keep_rounds=1)
    finally:
        s.close()
        srv.stop()
    window = s.engine.loop_state.window
    brief = window.frozen[window.block_start]["content"]
    assert "Build the parser" in brief
    assert "read_file" in brief and "missing.py" in brief and "What already failed" in brief
