"""Rewind in a live session (session/rewind/): the history, the plan ledger and the undo log
follow; a `!cmd` has its own point; forward undoes a rewind, conversation included; the event
and the log say it, and a resume rebuilds the same conversation."""

from __future__ import annotations

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.session.rewind import OutsideChanges, RewindError
from cerveau_tui.testing.scripted_server import ScriptedServer


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def plan(step: str) -> dict:
    steps = [{"id": step, "title": f"do {step}", "files": [f"{step}.txt"]}]
    return {"tool_calls": [{"name": "commit_plan", "arguments": {"steps": steps}}]}


SCRIPT = {
    "responses": [
        write("a.txt", "1\n"),
        {"content": "one"},
        plan("s2"),
        write("a.txt", "2\n"),
        {"content": "two"},
        {"content": "after the rewind"},
    ]
}


def session(tmp_path, srv, resume=None):
    settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "none.toml")
    bus = Emitter()
    rec = Recorder(bus)
    s = build_session(
        settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(srv.url), resume=resume
    )
    return s, rec


def test_rewind_both_cuts_history_plan_and_files_then_forward_puts_them_back(tmp_path):
    with ScriptedServer(SCRIPT) as srv:
        s, rec = session(tmp_path, srv)
        try:
            s.engine.run("first")
            after_one = list(s.engine.history)
            s.engine.run("second")
            rw = s.rewinder
            assert rw is not None
            assert [t.turn for t in rw.turns()] == [1, 2]
            assert s.report().steps  # turn 2 committed a plan
            result = rw.rewind(2, "both")
            assert (tmp_path / "a.txt").read_text() == "1\n"
            assert list(s.engine.history) == after_one
            assert not s.report().steps  # the plan ledger is as it was before turn 2
            ev = rec.of("rewound")[-1].payload
            assert ev["turn"] == 2 and ev["restored"] == ["a.txt"] and ev["messages_dropped"] > 0
            assert result.history_len == len(after_one)
            assert [t.current for t in rw.turns()] == [True, False]
            assert rw.can_forward()
            rw.forward()
            assert (tmp_path / "a.txt").read_text() == "2\n"
            assert len(s.engine.history) > len(after_one) and s.report().steps
            assert not rw.can_forward()  # once: a forward is not itself gone forward from
            rw.rewind(2, "both")
            s.engine.run("third")  # the cut history, then the new task, to the server
            sent = srv.requests[-1]["messages"]
            assert sent[1 : len(after_one) + 1] == after_one
            assert sent[len(after_one) + 1] == {"role": "user", "content": "third"}
            history = list(s.engine.history)
        finally:
            s.close()
        # A resume rebuilds the same conversation from the log.
        s2, _ = session(tmp_path, srv, resume="last")
        try:
            assert list(s2.engine.history) == history
            assert [t.current for t in s2.rewinder.turns()] == [True, False, True]
            s2.rewinder.rewind(1, "both")
            assert list(s2.engine.history) == []
            with pytest.raises(RewindError, match="rewound away"):
                s2.rewinder.rewind(3, "conversation")  # only its code can come back
            s2.rewinder.rewind(3, "code")
            assert (tmp_path / "a.txt").read_text() == "1\n"  # as before turn 3 started
        finally:
            s2.close()


def test_a_person_command_has_its_point_and_an_editor_change_is_named(tmp_path):
    (tmp_path / "keep.txt").write_text("k\n")
    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        s, rec = session(tmp_path, srv)
        try:
            s.engine.run("anything")
            s.engine.policy = None  # the person's own command, run as asked
            s.engine.exec("rm keep.txt && mkdir -p d/e && echo x > d/e/f.txt")
            assert not (tmp_path / "keep.txt").exists()
            rw = s.rewinder
            assert [p.at for p in rw.points.points] == ["turn", "end", "command", "end"]
            (tmp_path / "d" / "e" / "f.txt").write_text("edited by the person\n")
            with pytest.raises(OutsideChanges) as exc:
                rw.rewind(1, "code")
            assert exc.value.paths == ["d/e/f.txt"]
            assert not (tmp_path / "keep.txt").exists()  # refused: nothing touched
            # Kept as the person left it, the rest put back.
            result = rw.rewind(1, "code", keep=exc.value.paths)
            assert result.kept == ["d/e/f.txt"] and result.restored == ["keep.txt"]
            assert (tmp_path / "keep.txt").read_text() == "k\n"
            assert (tmp_path / "d/e/f.txt").read_text() == "edited by the person\n"
            # The point before the `!cmd` itself: the history goes back to before its message.
            cmd = next(p for p in rw.checkpoints() if p.at == "command")
            shell_at = len(s.engine.history)
            rw.rewind_to_point(cmd.id, "conversation")
            # Cut to before the command, then one note: the files were not changed back.
            assert len(s.engine.history) == cmd.history + 1 and cmd.history < shell_at
            assert "NOT changed back" in s.engine.history[-1]["content"]
            assert "I ran `rm keep.txt" not in str(list(s.engine.history))
        finally:
            s.close()
