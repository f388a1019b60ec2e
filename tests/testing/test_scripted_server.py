"""The scripted server speaks llama-server's wire format over real loopback HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cerveau_tui.testing.scripted_server import ScriptedServer

CHAT = {
    "messages": [{"role": "user", "content": "hi"}],
    "stream": True,
    "stream_options": {"include_usage": True},
    "max_tokens": 32,
}


def sse_events(url: str, body: dict) -> list[str]:
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=10) as r:
        assert r.headers["content-type"] == "text/event-stream"
        return [line[6:] for line in r.iter_lines() if line.startswith("data: ")]


def test_stream_has_role_chunk_deltas_finish_usage_timings_then_done() -> None:
    with ScriptedServer({"responses": [{"content": "hello world"}]}, piece=4) as srv:
        events = sse_events(srv.url, CHAT)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": None}
    assert (
        "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
        == "hello world"
    )
    assert chunks[-2]["choices"][0] == {"finish_reason": "stop", "index": 0, "delta": {}}
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    assert set(chunks[-1]["timings"]) >= {
        "cache_n",
        "prompt_n",
        "predicted_n",
        "predicted_per_second",
    }
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)


def test_without_include_usage_timings_ride_on_the_finish_chunk() -> None:
    body = {**CHAT, "stream_options": {}}
    with ScriptedServer({"responses": [{"content": "x"}]}) as srv:
        chunks = [json.loads(e) for e in sse_events(srv.url, body)[:-1]]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and "timings" in chunks[-1]
    assert not any("usage" in c for c in chunks)


def test_tool_call_deltas_carry_index_id_and_name_then_argument_fragments() -> None:
    script = {"responses": [{"tool_calls": [{"name": "bash", "arguments": {"command": "ls -la"}}]}]}
    with ScriptedServer(script, piece=5) as srv:
        chunks = [json.loads(e) for e in sse_events(srv.url, CHAT)[:-1]]
    frags = [
        tc for c in chunks if c["choices"] for tc in c["choices"][0]["delta"].get("tool_calls", [])
    ]
    assert frags[0]["index"] == 0 and frags[0]["id"] and frags[0]["function"]["name"] == "bash"
    assert (
        len(frags) > 2
        and "".join(f["function"]["arguments"] for f in frags) == '{"command": "ls -la"}'
    )
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"


def test_non_streaming_answers_with_one_chat_completion() -> None:
    script = {"responses": [{"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}]}]}
    with ScriptedServer(script) as srv:
        body = httpx.post(
            srv.url + "/v1/chat/completions", json={**CHAT, "stream": False}, timeout=10
        ).json()
    assert body["object"] == "chat.completion"
    msg = body["choices"][0]["message"]
    assert msg["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"path": "a"}'}
    assert body["choices"][0]["finish_reason"] == "tool_calls" and "timings" in body


def test_under_a_json_schema_calls_and_answers_come_back_as_action_text() -> None:
    script = {
        "responses": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
            {"content": "done"},
        ]
    }
    body = {
        **CHAT,
        "stream": False,
        "response_format": {"type": "json_schema", "json_schema": {"schema": {"oneOf": []}}},
    }
    with ScriptedServer(script) as srv:
        first = httpx.post(srv.url + "/v1/chat/completions", json=body, timeout=10).json()[
            "choices"
        ][0]["message"]
        second = httpx.post(srv.url + "/v1/chat/completions", json=body, timeout=10).json()[
            "choices"
        ][0]["message"]
    assert "tool_calls" not in first
    assert json.loads(first["content"]) == {"tool": "bash", "arguments": {"command": "echo hi"}}
    assert json.loads(second["content"]) == {"answer": "done"}


def test_error_entries_answer_with_llama_server_error_bodies() -> None:
    script = {
        "responses": [{"error": {"status": 500, "message": "Failed to parse input at pos 3"}}]
    }
    with ScriptedServer(script) as srv:
        r = httpx.post(srv.url + "/v1/chat/completions", json=CHAT, timeout=10)
    assert r.status_code == 500
    assert r.json() == {
        "error": {"code": 500, "message": "Failed to parse input at pos 3", "type": "server_error"}
    }


def test_an_exhausted_script_answers_plain_content_so_a_turn_ends() -> None:
    with ScriptedServer({"responses": []}) as srv:
        body = httpx.post(
            srv.url + "/v1/chat/completions", json={**CHAT, "stream": False}, timeout=10
        ).json()
    assert body["choices"][0]["message"]["content"] == "(script exhausted)"


def test_a_repeated_prompt_prefix_is_reported_as_cached() -> None:
    long = {"role": "system", "content": "stable prefix " * 40}
    first = {**CHAT, "stream": False, "messages": [long, {"role": "user", "content": "one"}]}
    second = {
        **first,
        "messages": [
            *first["messages"],
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": "two"},
        ],
    }
    with ScriptedServer({"responses": [{"content": "a"}, {"content": "b"}]}) as srv:
        t1 = httpx.post(srv.url + "/v1/chat/completions", json=first, timeout=10).json()["timings"]
        t2 = httpx.post(srv.url + "/v1/chat/completions", json=second, timeout=10).json()["timings"]
    assert t1["cache_n"] == 0
    assert t2["cache_n"] > 100 and t2["cache_n"] > 5 * t2["prompt_n"]


def test_health_props_and_a_labelled_tokenize() -> None:
    with ScriptedServer({"responses": []}, n_ctx=1234, supports_tools=False) as srv:
        assert httpx.get(srv.url + "/health").json() == {"status": "ok"}
        props = httpx.get(srv.url + "/props").json()
        tok = httpx.post(srv.url + "/tokenize", json={"content": "abcdefgh"}).json()
    assert props["default_generation_settings"]["n_ctx"] == 1234
    assert props["chat_template_caps"]["supports_tools"] is False
    assert len(tok["tokens"]) == 2 and "approximation" in tok


@pytest.fixture
def script_file(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"responses": [{"content": "from the script"}]}))
    return path


def test_the_command_line_server_answers_and_logs_every_request(
    tmp_path: Path, script_file: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cerveau_tui.testing.scripted_server",
            "--script",
            str(script_file),
            "--port",
            "0",
            "--log",
            str(log),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        url = banner.split("listening on ")[1].split()[0]
        first = httpx.post(
            url + "/v1/chat/completions", json={**CHAT, "stream": False}, timeout=10
        ).json()
        second = httpx.post(
            url + "/v1/chat/completions", json={**CHAT, "stream": False}, timeout=10
        ).json()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert first["choices"][0]["message"]["content"] == "from the script"
    assert second["choices"][0]["message"]["content"] == "(script exhausted)"
    assert [json.loads(line)["messages"] for line in log.read_text().splitlines()] == [
        CHAT["messages"]
    ] * 2


def test_the_command_line_server_refuses_a_bad_script(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"responses": "nope"}')
    proc = subprocess.run(
        [sys.executable, "-m", "cerveau_tui.testing.scripted_server", "--script", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "responses" in proc.stderr
