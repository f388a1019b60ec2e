"""Scenario tests of `cerveau run --json` on the scripted server: the interface people and the
acceptance checks use. Each runs the real CLI in a subprocess against a real loopback server."""

from __future__ import annotations

import json
import socket

from cerveau_tui.testing.scripted_server import ScriptedServer


def types(events):
    return [e["type"] for e in events]


#: What a turn's after_turn work may say once turn_ended is out (issue 13: distilling and mining
#: run after the answer): nothing else may follow the turn's end.
AFTER_TURN = {"lessons", "notice"}


def ended(events):
    ends = [i for i, e in enumerate(events) if e["type"] == "turn_ended"]
    assert ends, types(events)[-5:]
    after = types(events[ends[-1] + 1 :])
    assert set(after) <= AFTER_TURN, after
    return events[ends[-1]]["payload"]


def test_a_tool_call_changes_the_workspace_then_a_plain_answer_ends_the_turn(cli, tmp_path):
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "hello.txt", "content": "hello\n"}}
                ]
            },
            {"content": "Created hello.txt."},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "Create hello.txt containing hello")
    assert code == 0
    assert ended(events)["reason"] == "completed" and ended(events)["iterations"] == 2
    calls = [e["payload"]["name"] for e in events if e["type"] == "tool_call"]
    results = [e["payload"] for e in events if e["type"] == "tool_result"]
    assert calls == ["write_file"] and results[0]["name"] == "write_file" and results[0]["ok"]
    assert (tmp_path / "hello.txt").read_text() == "hello\n"
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(e["session_id"] for e in events)) == 1


def test_every_request_carries_a_token_cap_and_the_tools(cli, tmp_path):
    with ScriptedServer({"responses": [{"content": "hi"}]}) as srv:
        cli(tmp_path, srv.url, "say hi", "--max-tokens", "77")
        body = srv.requests[0]
    assert body["max_tokens"] == 77
    assert {t["function"]["name"] for t in body["tools"]} >= {
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "search",
        "bash",
    }


def test_the_prompt_prefix_is_byte_stable_across_iterations(cli, tmp_path):
    script = {
        "responses": [
            {"tool_calls": [{"name": "list_files", "arguments": {}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
            {"content": "done"},
        ]
    }
    (tmp_path / "a.txt").write_text("x")
    with ScriptedServer(script) as srv:
        cli(tmp_path, srv.url, "look around")
        bodies = srv.requests
    first, later = bodies[0]["messages"], bodies[2]["messages"]
    assert later[: len(first)] == first  # only ever appended to
    assert str(tmp_path) not in first[0]["content"]  # no paths in the stable system prompt


def test_a_dead_server_is_a_clear_error_and_a_turn_that_ends(cli, tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    code, events, _ = cli(tmp_path, f"http://127.0.0.1:{port}", "anything")
    assert code == 1
    errors = [e for e in events if e["type"] == "error"]
    assert errors and "127.0.0.1" in errors[0]["payload"]["message"]
    assert ended(events)["reason"] == "error"


def test_malformed_sse_is_an_error_event_and_a_reason(cli, tmp_path):
    with ScriptedServer(
        {"responses": [{"content": "partial answer here", "malformed": True}]}
    ) as srv:
        code, events, _ = cli(tmp_path, srv.url, "anything")
    assert code == 1
    assert any(e["type"] == "error" for e in events)
    assert ended(events)["reason"] == "error"


def test_a_server_dying_mid_stream_ends_the_turn_with_a_reason(cli, tmp_path):
    with ScriptedServer(
        {"responses": [{"content": "a long answer that will be cut", "die_after_chunks": 2}]}
    ) as srv:
        code, events, _ = cli(tmp_path, srv.url, "anything")
    assert code == 1
    assert ended(events)["reason"] == "error"
    err = [e for e in events if e["type"] == "error"][0]["payload"]
    assert err["message"] and err["error_class"] == "bad_stream"
    assert err["partial"] and "a long answer".startswith(err["partial"][:5])  # what arrived is kept


def test_cut_off_arguments_never_enter_the_history(cli, tmp_path):
    script = {
        "responses": [
            {
                "raw_arguments": '{"path": "big.py", "content": "def f():\\n    return 1',
                "name": "write_file",
                "finish_reason": "length",
            },
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "big.py", "content": "def f():\n    return 1\n"},
                    }
                ]
            },
            {"content": "ok"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "write big.py")
        second = srv.requests[1]["messages"]
    assert code == 0
    guards = [e["payload"] for e in events if e["type"] == "guard_tripped"]
    assert guards and guards[0]["guard"] == "truncation"
    blob = json.dumps(second)
    assert 'return 1"' not in blob and '"content\\": \\"def f' not in blob
    assert "cut off" in blob.lower()
    assert (tmp_path / "big.py").read_text() == "def f():\n    return 1\n"


def test_an_unknown_tool_gets_the_list_of_real_ones(cli, tmp_path):
    script = {
        "responses": [
            {"tool_calls": [{"name": "create_file", "arguments": {"path": "a"}}]},
            {"content": "ok"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "x")
        second = json.dumps(srv.requests[1]["messages"])
    assert code == 0
    assert [e["payload"]["guard"] for e in events if e["type"] == "guard_tripped"] == [
        "unknown_tool"
    ]
    assert "write_file" in second


def test_arguments_of_the_wrong_type_are_explained_to_the_model(cli, tmp_path):
    script = {
        "responses": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": ["a"], "content": 3}}]},
            {"content": "ok"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "x")
        tool_msgs = [m for m in srv.requests[1]["messages"] if m["role"] == "tool"]
    assert code == 0
    assert "path" in tool_msgs[0]["content"] and "string" in tool_msgs[0]["content"].lower()
    assert [p.name for p in tmp_path.iterdir()] == [".cerveau"]


def test_constrained_mode_turns_json_actions_into_tool_calls(cli, tmp_path):
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "c.txt", "content": "c"}}
                ]
            },
            {"content": "done"},
        ]
    }
    with ScriptedServer(script, supports_tools=False) as srv:
        code, events, _ = cli(tmp_path, srv.url, "write c")
        body = srv.requests[0]
    assert code == 0
    assert "response_format" in body and "tools" not in body
    assert (tmp_path / "c.txt").read_text() == "c"
    assert [e["payload"]["via"] for e in events if e["type"] == "tool_call"] == ["constrained"]


def test_a_loading_server_is_retried_not_fatal(cli, tmp_path):
    script = {
        "responses": [
            {"error": {"status": 503, "message": "Loading model", "type": "unavailable_error"}},
            {"content": "ready now"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "x")
    assert code == 0 and ended(events)["reason"] == "completed"


OVERFLOW = {
    "error": {
        "status": 400,
        "type": "exceed_context_size_error",
        "message": "the request exceeds the available context size, try increasing it",
    }
}


def test_context_overflow_compacts_and_retries(cli, tmp_path):
    with ScriptedServer({"responses": [OVERFLOW, {"content": "fits now"}]}) as srv:
        code, events, _ = cli(tmp_path, srv.url, "x " * 300)
        first, second = (json.dumps(r["messages"]) for r in srv.requests)
    assert code == 0 and ended(events)["reason"] == "completed"
    assert first != second, "the retry must change the request; the same one is refused again"
    assert any(
        "compacting" in e["payload"].get("text", "") for e in events if e["type"] == "notice"
    )


def test_context_overflow_that_persists_is_reported_with_its_class(cli, tmp_path):
    script = {"responses": [OVERFLOW] * 4}
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "x")
    err = [e for e in events if e["type"] == "error"][0]["payload"]
    assert err["error_class"] == "context_overflow"
    assert ended(events)["reason"] == "error" and code == 1


def test_headless_denies_crossings_and_says_so(cli, tmp_path):
    outside = tmp_path.parent / (tmp_path.name + "-outside.txt")
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": str(outside), "content": "x"}}
                ]
            },
            {"content": "ok"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "x")
    assert not outside.exists()
    res = [e["payload"] for e in events if e["type"] == "approval_resolved"]
    assert res and res[0]["decision"] == "denied"


def test_yes_is_refused_without_full_access(cli, tmp_path):
    with ScriptedServer({"responses": [{"content": "x"}]}) as srv:
        code, events, err = cli(tmp_path, srv.url, "x", "--yes")
    assert code == 2 and "full-access" in err


def test_a_generic_openai_server_without_extras_still_runs_a_turn(cli, tmp_path):
    script = {
        "responses": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "g.txt", "content": "g"}}
                ]
            },
            {"content": "done"},
        ]
    }
    with ScriptedServer(script, extras=False) as srv:
        code, events, _ = cli(tmp_path, srv.url, "write g")
        paths = [p for p, n in srv.state.hits.items() if n]
    assert code == 0 and (tmp_path / "g.txt").read_text() == "g"
    assert "/props" in paths  # it asked, got 404, and carried on with defaults


def test_a_file_name_that_is_not_utf8_does_not_break_the_turn(cli, tmp_path):
    import os

    with open(os.path.join(os.fsencode(tmp_path), b"bad\xffname.txt"), "wb") as f:
        f.write(b"needle\n")
    script = {
        "responses": [
            {"tool_calls": [{"name": "list_files", "arguments": {}}]},
            {"tool_calls": [{"name": "search", "arguments": {"pattern": "needle"}}]},
            {"content": "ok"},
        ]
    }
    with ScriptedServer(script) as srv:
        code, events, _ = cli(tmp_path, srv.url, "x")
    assert code == 0 and ended(events)["reason"] == "completed"
    outputs = [e["payload"]["output"] for e in events if e["type"] == "tool_result"]
    assert "bad\ufffdname.txt" in outputs[0] and "bad\ufffdname.txt:1: needle" in outputs[1]
