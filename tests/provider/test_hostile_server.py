"""A hostile or broken server cannot hang a call, grow memory without bound, or crash the loop.

Every case runs over real loopback HTTP against the scripted server's hostile streams. Nothing
here asserts how fast a call ends: only that it ends, with which error class, and how much it
held in memory on the way.
"""

from __future__ import annotations

import json
import threading
import tracemalloc
from typing import Any

import pytest

from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import Completion, ErrorClass, ProviderError, ReplyLimits
from cerveau_tui.testing import wire
from cerveau_tui.testing.scripted_server import ScriptedServer

MB = 1024 * 1024
ASK = [{"role": "user", "content": "Do it."}]
READ = {
    "name": "read_file",
    "description": "Read a file",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
# Generous: a call that is still running after this long is hung, whatever the machine.
HUNG_AFTER_S = 60


def provider(url: str, **kw: Any) -> LlamaProvider:
    kw.setdefault("sleep", lambda _s: None)
    kw.setdefault("max_retries", 0)
    return LlamaProvider(url, **kw)


def outcome(p: LlamaProvider, tools: list[dict[str, Any]] | None = None, **kw: Any) -> Any:
    """What one call ended with (a Completion or the exception), run on a thread so a call that
    hangs fails the test instead of hanging the suite."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(p.complete(ASK, tools or [], max_tokens=64, **kw))
        except BaseException as exc:  # noqa: BLE001 - the test inspects whatever escaped
            box.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(HUNG_AFTER_S)
    assert not t.is_alive(), "the call did not end"
    return box[0]


def raw_events(*chunks: dict[str, Any]) -> list[str]:
    """SSE lines for `raw_sse`, from chunk objects, then the end of stream."""
    return [wire.sse(c).decode().strip() for c in chunks] + ["data: [DONE]"]


def delta(d: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return wire.delta_chunk(d, "chatcmpl-x", 0, finish)


def deep_arguments(depth: int = 100_000) -> str:
    return '{"path": ' + "[" * depth + "]" * depth + "}"


# -- time ------------------------------------------------------------------------------------


def test_keepalive_pings_forever_end_at_the_deadline() -> None:
    with ScriptedServer({"responses": [{"keepalive": 0.05}]}) as srv:
        got = outcome(provider(srv.url, deadline_s=0.5))
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.DEADLINE
    assert "0.5 s" in got.message and not got.retryable


def test_cancel_is_seen_while_only_pings_arrive() -> None:
    cancel = threading.Event()
    with ScriptedServer({"responses": [{"keepalive": 0.05}]}) as srv:
        timer = threading.Timer(0.3, cancel.set)
        timer.start()
        got = outcome(provider(srv.url, deadline_s=HUNG_AFTER_S * 2), cancel=cancel)
        timer.cancel()
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.CANCELLED


# -- size ------------------------------------------------------------------------------------


def test_endless_content_ends_at_the_reply_cap_holding_no_more_than_it() -> None:
    limits = ReplyLimits(max_reply_bytes=1 * MB)
    with ScriptedServer({"responses": [{"endless": "all work and no play "}]}) as srv:
        tracemalloc.start()
        try:
            got = outcome(provider(srv.url, limits=limits))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.TOO_LARGE
    assert "more than 1 MB in the reply" in got.message
    assert got.partial is not None and 0 < len(got.partial.content) <= 1 * MB
    # The kept text, a joined copy of it, and read buffers: a few times the cap, not unbounded.
    assert peak < 16 * MB


def test_a_50_mb_line_is_refused_without_buffering_it() -> None:
    line = 50 * MB
    with ScriptedServer({"responses": [{"long_line": line}]}) as srv:
        tracemalloc.start()
        try:
            got = outcome(provider(srv.url))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.TOO_LARGE
    assert "one line of the stream" in got.message
    assert peak < line // 10


def test_a_long_line_under_the_cap_is_an_ordinary_reply() -> None:
    with ScriptedServer({"responses": [{"long_line": 300_000}]}) as srv:
        got = outcome(provider(srv.url))
    assert isinstance(got, Completion) and len(got.content) > 299_000


# -- shape -----------------------------------------------------------------------------------

WRONG_SHAPES = {
    "choices is a string": ['data: {"choices": "nope"}'],
    "a choice is a number": ['data: {"choices": [5]}'],
    "delta is a number": ['data: {"choices": [{"delta": 5}]}'],
    "content is a number": ['data: {"choices": [{"delta": {"content": 5}}]}'],
    "finish_reason is an object": ['data: {"choices": [{"delta": {}, "finish_reason": {}}]}'],
    "not JSON": ["data: this is not json"],
    "JSON but not an object": ["data: [1, 2, 3]"],
    "nested too deeply to parse": ["data: " + "[" * 100_000 + "]" * 100_000],
    "tool_calls is an object": raw_events(delta({"tool_calls": {"index": 0}})),
    "a tool call is a string": raw_events(delta({"tool_calls": ["read_file"]})),
    "arguments are a number": raw_events(
        delta({"tool_calls": [{"index": 0, "function": {"name": "x", "arguments": 5}}]})
    ),
    "arguments are a list": raw_events(
        delta({"tool_calls": [{"index": 0, "function": {"name": "x", "arguments": ["a"]}}]})
    ),
    "function is a string": raw_events(delta({"tool_calls": [{"index": 0, "function": "x"}]})),
    "name is a number": raw_events(delta({"tool_calls": [{"index": 0, "function": {"name": 1}}]})),
    "index is huge": raw_events(delta({"tool_calls": [{"index": 10**18, "function": {}}]})),
    "index is negative": raw_events(delta({"tool_calls": [{"index": -1, "function": {}}]})),
    "index is a string": raw_events(delta({"tool_calls": [{"index": "0", "function": {}}]})),
}


@pytest.mark.parametrize("lines", WRONG_SHAPES.values(), ids=WRONG_SHAPES.keys())
def test_a_reply_of_the_wrong_shape_is_a_bad_stream(lines: list[str]) -> None:
    with ScriptedServer({"responses": [{"raw_sse": lines}]}) as srv:
        got = outcome(provider(srv.url))
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.BAD_STREAM
    assert "malformed reply" in got.message


def test_too_many_tool_calls_in_one_reply_is_a_bad_stream() -> None:
    frags = [{"index": i, "function": {"name": "x", "arguments": "{}"}} for i in range(9)]
    lines = raw_events(delta({"tool_calls": frags}))
    with ScriptedServer({"responses": [{"raw_sse": lines}]}) as srv:
        got = outcome(provider(srv.url, limits=ReplyLimits(max_tool_calls=8)))
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.BAD_STREAM


def test_strange_usage_figures_are_unknown_not_a_failure() -> None:
    odd = {"prompt_tokens": "lots", "completion_tokens": 1e400}
    lines = raw_events(
        delta({"content": "ok"}, "stop"),
        {"choices": [], "usage": odd, "timings": {"prompt_n": [1], "predicted_per_second": "x"}},
    )
    with ScriptedServer({"responses": [{"raw_sse": lines}]}) as srv:
        got = outcome(provider(srv.url))
    assert isinstance(got, Completion) and got.content == "ok"
    assert got.usage.prompt_tokens == 0 and got.usage.completion_tokens == 0
    assert got.timings is not None and got.timings.prompt_n == 0


def test_an_error_event_nested_too_deeply_is_a_bad_stream() -> None:
    lines = ['data: {"error": ' + "[" * 100_000 + "]" * 100_000 + "}"]
    with ScriptedServer({"responses": [{"raw_sse": lines}]}) as srv:
        got = outcome(provider(srv.url))
    assert isinstance(got, ProviderError) and got.error_class == ErrorClass.BAD_STREAM


# -- arguments the model nested too deeply ---------------------------------------------------


def test_native_arguments_nested_100k_deep_arrive_as_invalid_arguments() -> None:
    script = {"responses": [{"tool_calls": [{"name": "read_file", "arguments": deep_arguments()}]}]}
    with ScriptedServer(script, piece=4096) as srv:
        got = outcome(provider(srv.url, action_mode="native"), [READ])
    assert isinstance(got, Completion) and [c.name for c in got.tool_calls] == ["read_file"]
    with pytest.raises(ValueError, match="nested deeper"):
        got.tool_calls[0].parsed()


def test_constrained_action_nested_100k_deep_is_the_call_with_invalid_arguments() -> None:
    action = '{"tool": "read_file", "arguments": ' + deep_arguments() + "}"
    lines = raw_events(delta({"content": action}), delta({}, "stop"))
    with ScriptedServer({"responses": [{"raw_sse": lines}]}) as srv:
        got = outcome(provider(srv.url, action_mode="constrained"), [READ])
    assert isinstance(got, Completion) and [c.name for c in got.tool_calls] == ["read_file"]
    with pytest.raises(ValueError, match="nested deeper"):
        got.tool_calls[0].parsed()


def test_arguments_just_past_the_depth_cap_are_refused_before_validation() -> None:
    # Parseable by json.loads, but deep enough that later pydantic and json.dumps work would be
    # at the mercy of the recursion limit: refused as invalid arguments up front.
    args = json.dumps({"path": json.loads("[" * 200 + "]" * 200)})
    lines = raw_events(
        delta({"tool_calls": [{"index": 0, "function": {"name": "read_file", "arguments": args}}]}),
        delta({}, "tool_calls"),
    )
    with ScriptedServer({"responses": [{"raw_sse": lines}]}) as srv:
        got = outcome(provider(srv.url, action_mode="native"), [READ])
    with pytest.raises(ValueError, match="nested deeper"):
        got.tool_calls[0].parsed()
