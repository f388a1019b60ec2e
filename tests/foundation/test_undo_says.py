"""What an undo (a rewind of the last turn's code) tells the person: a file the turn created is
removed, not "restored" (issue 21); an old log's `undo` events still read so."""

from __future__ import annotations

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.protocol import parse_payload
from cerveau_tui.protocol.describe import describe, describe_undo
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def session_for(tmp_path, script):
    srv = ScriptedServer(script).start()
    settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "none.toml")
    bus = Emitter()
    rec = Recorder(bus)
    return srv, build_session(settings, bus=bus, provider=LlamaProvider(srv.url)), rec


def _undo_after(tmp_path, calls):
    script = {"responses": [{"tool_calls": calls}, {"content": "done"}]}
    srv, s, rec = session_for(tmp_path, script)
    try:
        s.engine.run("change things")
        s.rewinder.rewind_last_turn()
    finally:
        s.close()
        srv.stop()
    return rec.of("rewound")[0].payload


def test_undoing_a_created_file_says_removed_not_restored(tmp_path):
    payload = _undo_after(
        tmp_path, [{"name": "write_file", "arguments": {"path": "hello.py", "content": "x=1\n"}}]
    )
    assert not (tmp_path / "hello.py").exists()  # the host's view: it is gone
    line, _ = describe(parse_payload("rewound", payload)) or ("", "")
    assert line == "rewind to turn 1 (code); removed hello.py"


def test_undoing_an_edit_and_a_creation_names_each_for_what_happened(tmp_path):
    (tmp_path / "a.txt").write_text("original\n")
    payload = _undo_after(
        tmp_path,
        [
            {"name": "edit_file", "arguments": {"path": "a.txt", "old": "original", "new": "c"}},
            {"name": "write_file", "arguments": {"path": "new.txt", "content": "n"}},
        ],
    )
    assert (tmp_path / "a.txt").read_text() == "original\n"
    assert payload["removed"] == ["new.txt"]
    line, _ = describe(parse_payload("rewound", payload)) or ("", "")
    assert line == "rewind to turn 1 (code); restored a.txt; removed new.txt"


def test_an_old_logs_undo_written_before_removed_existed_still_reads_as_restored():
    line = describe(parse_payload("undo", {"restored": ["a.txt"], "not_restorable": []}))
    assert line == ("undo: restored a.txt", "info")


def test_an_old_logs_undo_still_names_what_a_command_changed_not_restorable():
    text = describe_undo([], [], ["made_by_shell.txt"])
    assert "NOT restorable" in text and "made_by_shell.txt" in text
