"""The window is shared honestly: the reply cap follows n_ctx, a result never overflows it, an
overflow retry changes the request, and the context figure is the server's own count."""

from __future__ import annotations

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.context.budget import fit_result, reply_cap, result_room, shrink_largest
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def chars(text: str) -> int:
    return len(text)


def test_the_reply_cap_is_an_eighth_of_the_window_within_bounds():
    assert reply_cap(32768, None) == 4096
    assert reply_cap(16384, None) == 2048
    assert reply_cap(2048, None) == 512
    assert reply_cap(131072, None) == 4096


def test_an_explicit_reply_cap_wins_over_the_derived_one():
    assert reply_cap(32768, 77) == 77


def test_a_result_that_fits_is_unchanged():
    assert fit_result("short", 100, chars) == "short"


def test_a_result_over_the_room_keeps_head_and_tail_and_declares_the_cut():
    text = "".join(f"{i}\n" for i in range(1, 3001))
    shown = fit_result(text, 1000, chars)
    assert len(shown) <= 1000
    assert shown.startswith("1\n2\n3\n") and shown.rstrip().endswith("3000")
    assert "cut here" in shown and "room for 1,000 tokens" in shown


def test_the_room_is_what_the_window_has_left_and_never_nothing():
    assert result_room(8192, 2000, 1024) == 8192 - 2000 - 1024 - 128
    assert result_room(4096, 4000, 512) == (4096 - 512) // 4


def test_shrinking_cuts_the_largest_message_and_leaves_the_history_alone():
    messages = [{"role": "system", "content": "s" * 5000}, {"role": "user", "content": "u" * 4000}]
    out = shrink_largest(messages, 0.5, chars)
    assert len(out[1]["content"]) <= 2000 and messages[1]["content"] == "u" * 4000
    assert out[0] is messages[0]


def session(tmp_path, srv, env=None):
    settings = load_settings(tmp_path, environ=env or {}, user_config=tmp_path / "n")
    bus = Emitter()
    rec = Recorder(bus)
    s = build_session(settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(srv.url))
    return s, rec


def test_without_a_setting_the_request_cap_is_derived_from_the_servers_n_ctx(tmp_path):
    with ScriptedServer({"responses": [{"content": "hi"}]}, n_ctx=32768) as srv:
        s, _ = session(tmp_path, srv)
        s.engine.run("say hi")
        s.close()
    assert srv.requests[0]["max_tokens"] == 4096 and srv.requests[0]["n_predict"] == 4096


def test_a_set_max_tokens_is_sent_as_is(tmp_path):
    with ScriptedServer({"responses": [{"content": "hi"}]}, n_ctx=32768) as srv:
        s, _ = session(tmp_path, srv, {"CERVEAU_MAX_TOKENS": "77"})
        s.engine.run("say hi")
        s.close()
    assert srv.requests[0]["max_tokens"] == 77


def test_a_huge_tool_result_is_cut_to_fit_and_the_turn_goes_on(tmp_path):
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    call = {"tool_calls": [{"name": "read_file", "arguments": {"path": "big.txt"}}]}
    with ScriptedServer({"responses": [call, {"content": "read it"}]}, n_ctx=4096) as srv:
        s, rec = session(tmp_path, srv)
        out = s.engine.run("read big.txt")
        s.close()
    assert out.reason == "completed", out.message
    shown = rec.of("tool_result")[0].payload["output"]
    assert "cut here" in shown and "line 1" in shown
    assert len(srv.requests) == 2


def test_an_overflow_retry_never_sends_the_same_request_twice(tmp_path):
    task = "x " * 12000  # the task alone is larger than the window: packing cannot drop it
    with ScriptedServer({"responses": [{"content": "ok"}]}, n_ctx=4096) as srv:
        s, rec = session(tmp_path, srv)
        s.engine.run(task)
        s.close()
    bodies = [repr(b["messages"]) for b in srv.requests]
    assert len(bodies) == len(set(bodies)), "an identical request was sent again"


def test_on_overflow_the_context_figure_is_the_servers_count_of_the_refused_prompt(tmp_path):
    with ScriptedServer({"responses": [{"content": "ok"}]}, n_ctx=4096) as srv:
        s, rec = session(tmp_path, srv)
        s.engine.run("x " * 12000)
        s.close()
    first = rec.of("usage")[0].payload
    assert first["context_tokens"] > 4096 and first["n_ctx"] == 4096


def test_the_context_figure_is_the_servers_prompt_count(tmp_path):
    with ScriptedServer({"responses": [{"content": "hi"}]}, n_ctx=8192) as srv:
        s, rec = session(tmp_path, srv)
        s.engine.run("say hi")
        s.close()
    usage = rec.of("usage")[-1].payload
    assert usage["context_tokens"] == usage["prompt_tokens"] > 0


def test_seq_3000_on_a_4k_server_is_cut_to_fit_and_never_retried_identically(tmp_path):
    """The observed case: the output overflowed the window, four identical requests were sent and
    the turn ended in error while the status bar said 28%."""
    call = {"tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 3000"}}]}
    with ScriptedServer({"responses": [call, {"content": "counted"}]}, n_ctx=4096) as srv:
        s, rec = session(tmp_path, srv, {"CERVEAU_APPROVAL": '"never"'})
        out = s.engine.run("count to 3000")
        s.close()
    assert out.reason == "completed", out.message
    shown = rec.of("tool_result")[0].payload["output"]
    assert shown.startswith("1\n2\n") and "3000" in shown[-40:] and "cut here" in shown
    bodies = [repr(b["messages"]) for b in srv.requests]
    assert len(bodies) == len(set(bodies)) == 2
