"""Stream parsing and delta assembly (pure: no server)."""

from __future__ import annotations

import json

import pytest

from cerveau_tui.provider.sse import (
    MalformedChunk,
    StreamAssembler,
    StreamErrorEvent,
    completion_from_body,
    iter_sse_data,
    parse_chunk,
)


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        "object": "chat.completion.chunk",
    }


def call_frag(
    index: int, *, id: str | None = None, name: str | None = None, args: str | None = None
) -> dict:
    fn: dict = {}
    if name is not None:
        fn["name"] = name
    if args is not None:
        fn["arguments"] = args
    frag: dict = {"index": index, "function": fn}
    if id is not None:
        frag["id"] = id
    return chunk({"tool_calls": [frag]})


def test_interleaved_tool_calls_are_assembled_by_index() -> None:
    asm = StreamAssembler()
    for c in [
        call_frag(0, id="a", name="write_file", args=""),
        call_frag(1, id="b", name="read_file", args='{"pa'),
        call_frag(0, args='{"path": "x.py", "content": "print(\\"hi'),
        call_frag(1, args='th": "y.py"}'),
        call_frag(0, args='\\")\\n"}'),
        chunk({}, "tool_calls"),
    ]:
        asm.feed(c)
    done = asm.completion()
    assert [(t.id, t.name) for t in done.tool_calls] == [("a", "write_file"), ("b", "read_file")]
    assert done.tool_calls[0].parsed() == {"path": "x.py", "content": 'print("hi")\n'}
    assert done.tool_calls[1].parsed() == {"path": "y.py"}
    assert done.finish_reason == "tool_calls"


def test_argument_fragments_split_inside_an_escape_join_exactly() -> None:
    text = json.dumps({"content": 'a "quoted" line\nand \\ a backslash \u00e9'})
    asm = StreamAssembler()
    asm.feed(call_frag(0, id="c", name="write_file"))
    for i in range(0, len(text), 3):
        asm.feed(call_frag(0, args=text[i : i + 3]))
    assert asm.completion().tool_calls[0].arguments == text


def test_reasoning_is_kept_apart_from_content() -> None:
    asm = StreamAssembler()
    shown = [
        asm.feed(chunk({"reasoning_content": "think "})),
        asm.feed(chunk({"content": "answer"})),
    ]
    done = asm.completion()
    assert (done.reasoning, done.content) == ("think ", "answer")
    assert [(d.reasoning, d.content) for d in shown if d] == [("think ", ""), ("", "answer")]


def test_role_only_and_empty_deltas_show_nothing() -> None:
    asm = StreamAssembler()
    assert asm.feed(chunk({"role": "assistant", "content": None})) is None
    assert asm.feed(chunk({}, "stop")) is None


def test_usage_and_timings_come_from_the_choiceless_last_chunk() -> None:
    asm = StreamAssembler()
    asm.feed(chunk({"content": "x"}))
    asm.feed(chunk({}, "stop"))
    asm.feed(
        {
            "choices": [],
            "usage": {"prompt_tokens": 30, "completion_tokens": 2},
            "timings": {
                "cache_n": 25,
                "prompt_n": 5,
                "predicted_n": 2,
                "predicted_per_second": 61.5,
            },
        }
    )
    done = asm.completion()
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (30, 2)
    assert done.timings is not None and (done.timings.cache_n, done.timings.prompt_n) == (25, 5)
    assert done.timings.predicted_per_second == 61.5


def test_sse_comments_pings_and_blank_lines_are_skipped() -> None:
    lines = [": ping", "", "event: message", 'data: {"a": 1}', "", "data:[DONE]"]
    assert list(iter_sse_data(lines)) == ['{"a": 1}', "[DONE]"]


def test_a_non_json_data_line_is_malformed() -> None:
    with pytest.raises(MalformedChunk):
        parse_chunk("{this is not json")


def test_an_error_event_inside_the_stream_is_raised_with_its_payload() -> None:
    with pytest.raises(StreamErrorEvent) as info:
        parse_chunk('{"error": {"code": 500, "message": "Failed to parse input at pos 12"}}')
    assert info.value.error["code"] == 500


def test_a_non_streaming_body_assembles_the_same_way() -> None:
    body = {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": "hm",
                    "tool_calls": [
                        {
                            "type": "function",
                            "id": "z",
                            "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    done = completion_from_body(body)
    assert done.tool_calls[0].name == "bash" and done.tool_calls[0].parsed() == {"command": "ls"}
    assert done.reasoning == "hm" and done.usage.completion_tokens == 4


def test_a_lone_surrogate_in_a_chunk_becomes_a_replacement_character_not_a_crash() -> None:
    # JSON may escape half a surrogate pair; Python keeps it, and the first UTF-8 encode raised.
    chunk = parse_chunk('{"choices":[{"delta":{"content":"a\\ud83d b \\ud83d\\ude00"}}]}')
    text = chunk["choices"][0]["delta"]["content"]
    assert text == "a\ufffd b \U0001f600"
    text.encode("utf-8")
