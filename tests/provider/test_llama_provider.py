"""LlamaProvider against the scripted server over real loopback HTTP (no mocked transport)."""

from __future__ import annotations

import json
import socket
import threading

import pytest

from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import Delta, ErrorClass, ProviderError
from cerveau_tui.stack.capabilities import CACHE_REUSE_TOKENS
from cerveau_tui.testing.scripted_server import ScriptedServer

READ = {
    "name": "read_file",
    "description": "Read a file",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
WRITE = {
    "name": "write_file",
    "description": "Write a file",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
}
TOOLS = [READ, WRITE]
ASK = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Do it."},
]


class Sleeps(list):
    """The injected sleep: records what was asked, waits for nothing."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def provider(url: str, **kw) -> LlamaProvider:
    kw.setdefault("sleep", Sleeps())
    return LlamaProvider(url, **kw)


def test_content_streams_as_deltas_and_the_completion_carries_usage_and_timings() -> None:
    with ScriptedServer(
        {"responses": [{"content": "Hello there, this is the answer."}]}, piece=5
    ) as srv:
        seen: list[Delta] = []
        done = provider(srv.url).complete(ASK, TOOLS, max_tokens=64, on_delta=seen.append)
    assert done.content == "Hello there, this is the answer."
    assert len(seen) > 1 and "".join(d.content for d in seen) == done.content
    assert done.finish_reason == "stop" and done.usage.prompt_tokens > 0
    assert done.timings is not None and done.timings.prompt_n > 0


def test_native_tool_calls_arrive_whole_from_three_character_fragments() -> None:
    calls = [
        {"name": "write_file", "arguments": {"path": "a.py", "content": 'print("x")\n'}},
        {"name": "read_file", "arguments": {"path": "b.py"}},
    ]
    with ScriptedServer({"responses": [{"tool_calls": calls}]}, piece=3) as srv:
        done = provider(srv.url, action_mode="native").complete(ASK, TOOLS, max_tokens=64)
    assert [(c.name, c.parsed()) for c in done.tool_calls] == [
        (c["name"], c["arguments"]) for c in calls
    ]
    assert len({c.id for c in done.tool_calls}) == 2 and done.via == "native"
    assert done.finish_reason == "tool_calls"


def test_reasoning_reaches_the_caller_apart_from_content() -> None:
    with ScriptedServer({"responses": [{"reasoning": "Let me think.", "content": "42"}]}) as srv:
        seen: list[Delta] = []
        done = provider(srv.url).complete(ASK, [], max_tokens=64, on_delta=seen.append)
    assert (done.reasoning, done.content) == ("Let me think.", "42")
    assert (
        "".join(d.reasoning for d in seen) == "Let me think."
        and "".join(d.content for d in seen) == "42"
    )


def test_every_request_is_capped_streamed_and_cache_friendly() -> None:
    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        provider(srv.url, action_mode="native").complete(ASK, TOOLS, max_tokens=77)
        body = srv.requests[0]
    assert body["max_tokens"] == 77 and body["n_predict"] == 77
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["cache_prompt"] is True
    # Issue 36: a kept part after a compaction is shifted into place on a --server too.
    assert body["n_cache_reuse"] == CACHE_REUSE_TOKENS
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file", "write_file"]


def test_auto_mode_goes_constrained_when_the_template_cannot_carry_tools() -> None:
    script = {"responses": [{"tool_calls": [{"name": "read_file", "arguments": {"path": "x.py"}}]}]}
    with ScriptedServer(script, supports_tools=False) as srv:
        seen: list[Delta] = []
        done = provider(srv.url).complete(ASK, TOOLS, max_tokens=64, on_delta=seen.append)
        body = srv.requests[0]
    assert "tools" not in body
    assert body["response_format"]["type"] == "json_schema"
    assert [
        o["properties"].get("tool", {}).get("const")
        for o in body["response_format"]["json_schema"]["schema"]["oneOf"]
    ] == ["read_file", "write_file", None]
    assert done.via == "constrained"
    assert [(c.name, c.parsed()) for c in done.tool_calls] == [("read_file", {"path": "x.py"})]
    # Raw action JSON is never shown as content; what streams is the call's progress.
    assert done.tool_calls[0].id and seen and all(d.content == "" for d in seen)
    assert seen[-1].tool_name == "read_file" and '"path"' in seen[-1].tool_head


def test_auto_mode_stays_native_when_the_template_supports_tools() -> None:
    with ScriptedServer({"responses": [{"content": "ok"}]}, supports_tools=True) as srv:
        p = provider(srv.url)
        p.complete(ASK, TOOLS, max_tokens=16)
        assert "tools" in srv.requests[0] and "response_format" not in srv.requests[0]
        assert p.resolved_mode() == "native"


def test_constrained_answer_streams_as_plain_text() -> None:
    with ScriptedServer(
        {"responses": [{"content": 'The answer is "42".'}]}, supports_tools=False, piece=2
    ) as srv:
        seen: list[Delta] = []
        done = provider(srv.url).complete(ASK, TOOLS, max_tokens=64, on_delta=seen.append)
    assert done.content == 'The answer is "42".' and done.tool_calls == []
    assert "".join(d.content for d in seen) == done.content


def test_constrained_mode_sends_the_history_rewritten_into_template_roles() -> None:
    history = ASK + [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "x.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "print(1)"},
    ]
    with ScriptedServer({"responses": [{"content": "done"}]}) as srv:
        provider(srv.url, action_mode="constrained").complete(history, TOOLS, max_tokens=16)
        sent = srv.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[3]["content"] == "Result of read_file:\nprint(1)"


def test_constrained_call_cut_at_the_cap_comes_back_with_its_raw_text() -> None:
    script = {
        "responses": [
            {
                "raw_arguments": '{"path": "big.py", "content": "def f(',
                "name": "write_file",
                "finish_reason": "length",
            }
        ]
    }
    with ScriptedServer(script, supports_tools=False) as srv:
        done = provider(srv.url).complete(ASK, TOOLS, max_tokens=16)
    assert done.finish_reason == "length"
    assert done.tool_calls[0].name == "write_file"
    assert done.tool_calls[0].arguments == '{"path": "big.py", "content": "def f('
    with pytest.raises(ValueError):
        done.tool_calls[0].parsed()


def test_native_call_cut_at_the_cap_keeps_its_raw_arguments() -> None:
    script = {
        "responses": [
            {
                "raw_arguments": '{"path": "big.py", "content": "abc',
                "name": "write_file",
                "finish_reason": "length",
            }
        ]
    }
    with ScriptedServer(script) as srv:
        done = provider(srv.url, action_mode="native").complete(ASK, TOOLS, max_tokens=16)
    assert (
        done.finish_reason == "length"
        and done.tool_calls[0].arguments == '{"path": "big.py", "content": "abc'
    )


def test_transient_failures_are_retried_with_backoff_through_the_injected_sleep() -> None:
    script = {
        "responses": [
            {"error": {"status": 503, "message": "no slot available"}},
            {"error": {"status": 502, "message": "bad gateway"}},
            {"content": "finally"},
        ]
    }
    sleeps = Sleeps()
    with ScriptedServer(script) as srv:
        done = provider(srv.url, sleep=sleeps).complete(ASK, [], max_tokens=16)
    assert done.content == "finally"
    assert sleeps == [0.5, 1.0]


def test_a_loading_model_is_waited_for() -> None:
    script = {
        "responses": [
            {"error": {"status": 503, "message": "Loading model", "type": "unavailable_error"}},
            {"content": "ready"},
        ]
    }
    sleeps = Sleeps()
    with ScriptedServer(script) as srv:
        assert provider(srv.url, sleep=sleeps).complete(ASK, [], max_tokens=16).content == "ready"
    assert sleeps == [0.5]


def test_retries_give_up_after_max_retries_with_the_last_class() -> None:
    script = {"responses": [{"error": {"status": 503, "message": "busy"}}] * 5}
    sleeps = Sleeps()
    with ScriptedServer(script) as srv, pytest.raises(ProviderError) as info:
        provider(srv.url, sleep=sleeps, max_retries=3).complete(ASK, [], max_tokens=16)
    assert info.value.error_class == ErrorClass.TRANSIENT and info.value.status == 503
    assert sleeps == [0.5, 1.0, 2.0]


def test_retries_stop_when_the_timeout_budget_is_spent() -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    script = {"responses": [{"error": {"status": 503, "message": "busy"}}] * 5}
    with ScriptedServer(script) as srv, pytest.raises(ProviderError):
        provider(srv.url, sleep=sleep, clock=lambda: now[0], timeout_s=1.0, max_retries=5).complete(
            ASK, [], max_tokens=16
        )
        # 0.5 fits in the budget; 0.5 + 1.0 would not
    assert now[0] == 0.5


def test_a_parse_failure_is_raised_at_once_with_an_actionable_message() -> None:
    script = {
        "responses": [{"error": {"status": 500, "message": "Failed to parse input at pos 57"}}]
    }
    sleeps = Sleeps()
    with ScriptedServer(script) as srv, pytest.raises(ProviderError) as info:
        provider(srv.url, sleep=sleeps).complete(ASK, TOOLS, max_tokens=16)
    assert info.value.error_class == ErrorClass.PARSE_FAILURE and sleeps == []
    assert (
        "Failed to parse input at pos 57" in info.value.message and "redone" in info.value.message
    )


def test_a_prompt_larger_than_the_context_is_a_context_overflow() -> None:
    with (
        ScriptedServer({"responses": [{"content": "never"}]}, n_ctx=64) as srv,
        pytest.raises(ProviderError) as info,
    ):
        provider(srv.url).complete([{"role": "user", "content": "word " * 200}], [], max_tokens=16)
    assert info.value.error_class == ErrorClass.CONTEXT_OVERFLOW and info.value.status == 400


def test_a_malformed_sse_line_is_a_bad_stream_that_keeps_what_arrived() -> None:
    with (
        ScriptedServer(
            {"responses": [{"content": "partial answer here", "malformed": True}]}
        ) as srv,
        pytest.raises(ProviderError) as info,
    ):
        provider(srv.url).complete(ASK, [], max_tokens=64)
    assert info.value.error_class == ErrorClass.BAD_STREAM
    assert info.value.partial is not None and info.value.partial.content == "partial "


def test_a_server_dying_mid_stream_is_a_bad_stream_that_keeps_what_arrived() -> None:
    with (
        ScriptedServer(
            {"responses": [{"content": "a long answer that will be cut", "die_after_chunks": 3}]}
        ) as srv,
        pytest.raises(ProviderError) as info,
    ):
        provider(srv.url).complete(ASK, [], max_tokens=64)
    assert info.value.error_class == ErrorClass.BAD_STREAM and not info.value.retryable
    assert info.value.partial is not None and info.value.partial.content == "a long answer th"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_that_is_not_there_is_a_connection_error_after_retries() -> None:
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as info:
        provider(f"http://127.0.0.1:{free_port()}", sleep=sleeps, action_mode="native").complete(
            ASK, [], max_tokens=16
        )
    assert info.value.error_class == ErrorClass.CONNECTION
    assert sleeps == [0.5, 1.0, 2.0]
    assert "cerveau stack up" in info.value.message


def test_cancel_mid_stream_stops_and_keeps_the_partial_answer() -> None:
    cancel = threading.Event()
    with (
        ScriptedServer(
            {"responses": [{"content": "one two three four five six seven"}]}, piece=4
        ) as srv,
        pytest.raises(ProviderError) as info,
    ):
        provider(srv.url).complete(
            ASK, [], max_tokens=64, cancel=cancel, on_delta=lambda d: cancel.set()
        )
    assert info.value.error_class == ErrorClass.CANCELLED
    assert info.value.partial is not None and info.value.partial.content == "one "


def test_props_health_and_tokenize_from_llama_server() -> None:
    with ScriptedServer({"responses": []}, n_ctx=2048, supports_tools=False) as srv:
        p = provider(srv.url)
        props = p.props()
        assert (props.n_ctx, props.supports_tools, props.total_slots) == (2048, False, 1)
        assert p.health() is True
        assert p.tokenize("12345678") is not None and len(p.tokenize("12345678") or []) == 2


def test_a_server_without_extras_degrades_instead_of_crashing() -> None:
    with ScriptedServer({"responses": [{"content": "plain"}]}, extras=False) as srv:
        p = provider(srv.url)
        assert p.props().n_ctx is None and p.props().supports_tools is None
        assert p.health() is True  # answered through /v1/models
        assert p.tokenize("hello") is None
        assert p.resolved_mode() == "constrained"  # no evidence the template carries tools
        assert p.complete(ASK, TOOLS, max_tokens=16).content == "plain"
        assert srv.state.hits["/props"] == 1  # a 404 is remembered, not asked before every call


def test_an_unreachable_server_is_unhealthy_with_empty_props() -> None:
    p = provider(f"http://127.0.0.1:{free_port()}")
    assert p.health() is False and p.props().n_ctx is None and p.tokenize("x") is None


def test_unknown_action_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="action_mode"):
        LlamaProvider("http://127.0.0.1:1", action_mode="grammar")


def test_request_log_is_valid_json_lines(tmp_path) -> None:
    log = tmp_path / "requests.jsonl"
    with ScriptedServer({"responses": [{"content": "a"}, {"content": "b"}]}, log=str(log)) as srv:
        p = provider(srv.url)
        p.complete(ASK, [], max_tokens=8)
        p.complete(ASK, [], max_tokens=8)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["messages"] == ASK


def test_an_error_event_mid_stream_is_classified_and_keeps_the_partial_answer() -> None:
    script = {
        "responses": [
            {
                "content": "I will now call",
                "error": {
                    "status": 500,
                    "message": "Failed to parse input at pos 15",
                    "after_chunks": 2,
                },
            }
        ]
    }
    with ScriptedServer(script) as srv, pytest.raises(ProviderError) as info:
        provider(srv.url, action_mode="native").complete(ASK, TOOLS, max_tokens=64)
    assert info.value.error_class == ErrorClass.PARSE_FAILURE and info.value.status == 500
    assert info.value.partial is not None and info.value.partial.content == "I will n"


def test_a_transient_failure_after_text_was_shown_is_not_retried() -> None:
    script = {
        "responses": [
            {
                "content": "shown already",
                "error": {"status": 503, "message": "busy", "after_chunks": 2},
            },
            {"content": "again"},
        ]
    }
    sleeps = Sleeps()
    with ScriptedServer(script) as srv, pytest.raises(ProviderError) as info:
        provider(srv.url, sleep=sleeps).complete(ASK, [], max_tokens=64)
    assert info.value.error_class == ErrorClass.TRANSIENT and sleeps == []
