"""Forward after a rewind (issue 25): the conversation is the one before the rewind, whatever the
rewind's mode, in the live engine (the next request), in the stored transcript a TUI redraws,
and in a resumed session (`run --resume last`)."""

from __future__ import annotations

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.session.stored import TRANSCRIPT_TYPES, read_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


SCRIPT = {
    "responses": [
        write("a.txt", "1\n"),
        {"content": "one"},
        write("a.txt", "2\n"),
        {"content": "two"},
        {"content": "after the forward"},
        {"content": "after the resume"},
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


def redrawn(tmp_path, sid):
    """What a TUI redraws of the stored session: its turns' events, in order."""
    t = read_session(tmp_path, sid).transcript()
    return [(e.seq, str(e.type)) for e in t if e.type in TRANSCRIPT_TYPES]


@pytest.mark.parametrize("mode", ["both", "code", "conversation"])
def test_forward_gives_back_the_conversation_before_the_rewind(tmp_path, mode):
    with ScriptedServer(SCRIPT) as srv:
        s, _ = session(tmp_path, srv)
        try:
            s.engine.run("first")
            s.engine.run("second")
            sid = s.log.session_id
            history = list(s.engine.history)
            chat = redrawn(tmp_path, sid)
            assert any(t == "turn_started" for _, t in chat[2:])  # two turns to redraw
            rw = s.rewinder
            assert rw is not None
            rw.rewind(2, mode)  # type: ignore[arg-type]
            rw.forward()
            assert list(s.engine.history) == history  # no note of the rewind left behind
            transcript = [(e.seq, str(e.type)) for e in rw.transcript()]
            assert [x for x in transcript if x in set(chat)] == chat
            assert redrawn(tmp_path, sid) == chat  # what a resume redraws
            assert (tmp_path / "a.txt").read_text() == "2\n"
            s.engine.run("third")
            sent = srv.requests[-1]["messages"]
            assert sent[1 : len(history) + 1] == history
            assert sent[len(history) + 1] == {"role": "user", "content": "third"}
            history = list(s.engine.history)
        finally:
            s.close()
        s2, _ = session(tmp_path, srv, resume="last")
        try:
            assert list(s2.engine.history) == history
            s2.engine.run("fourth")
            sent = srv.requests[-1]["messages"]
            assert sent[1 : len(history) + 1] == history
        finally:
            s2.close()


def test_a_resume_after_rewind_and_forward_redraws_every_turn(tmp_path):
    with ScriptedServer(SCRIPT) as srv:
        s, _ = session(tmp_path, srv)
        try:
            s.engine.run("first")
            s.engine.run("second")
            sid = s.log.session_id
            chat = redrawn(tmp_path, sid)
            s.rewinder.rewind(1, "both")
            assert redrawn(tmp_path, sid) == []  # the cut chat, while rewound
            s.rewinder.forward()
        finally:
            s.close()
        s2, _ = session(tmp_path, srv, resume="last")
        try:
            assert [x for x in redrawn(tmp_path, sid) if x in set(chat)] == chat
            asked = [e.payload["input"] for e in s2.transcript() if e.type == "turn_started"]
            assert asked == ["first", "second"]
        finally:
            s2.close()
