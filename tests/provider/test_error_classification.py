"""Failures sorted by message text, with the texts llama-server actually sends."""

from __future__ import annotations

import pytest

from cerveau_tui.provider.errors import backoff_delay, classify_error, describe, server_message
from cerveau_tui.provider.types import ErrorClass

CASES = [
    (
        500,
        '{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 40: syntax error while parsing value - invalid string: missing closing quote; last read: \'\\"print(\'","type":"server_error"}}',
        ErrorClass.TRUNCATED_ARGS,
    ),
    (
        500,
        '{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 9: syntax error while parsing object - unexpected end of input; expected \'}\'"}}',
        ErrorClass.TRUNCATED_ARGS,
    ),
    (
        500,
        '{"error":{"code":500,"message":"Failed to parse input at pos 57","type":"server_error"}}',
        ErrorClass.PARSE_FAILURE,
    ),
    (
        500,
        '{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format"}}',
        ErrorClass.PARSE_FAILURE,
    ),
    (
        400,
        '{"error":{"code":400,"message":"request (2531 tokens) exceeds the available context size (2048 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":2531,"n_ctx":2048}}',
        ErrorClass.CONTEXT_OVERFLOW,
    ),
    (
        400,
        '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}',
        ErrorClass.CONTEXT_OVERFLOW,
    ),
    (
        503,
        '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}',
        ErrorClass.LOADING,
    ),
    (
        500,
        '{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}',
        ErrorClass.JINJA_MISSING,
    ),
    (None, "[Errno 111] Connection refused", ErrorClass.CONNECTION),
    (None, "All connection attempts failed", ErrorClass.CONNECTION),
    (None, "[Errno 104] Connection reset by peer", ErrorClass.TRANSIENT),
    (502, "Bad Gateway", ErrorClass.TRANSIENT),
    (
        503,
        '{"error":{"code":503,"message":"no slot available","type":"unavailable_error"}}',
        ErrorClass.TRANSIENT,
    ),
    (504, "", ErrorClass.TRANSIENT),
    (
        500,
        '{"error":{"code":500,"message":"Cannot use custom grammar constraints with tools."}}',
        ErrorClass.FATAL,
    ),
    (
        401,
        '{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}',
        ErrorClass.FATAL,
    ),
]


@pytest.mark.parametrize(("status", "body", "expected"), CASES)
def test_failure_text_decides_the_class(
    status: int | None, body: str, expected: ErrorClass
) -> None:
    assert classify_error(status, body) == expected


def test_unparseable_json_arguments_without_a_cut_are_a_parse_failure_not_truncation() -> None:
    body = "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] syntax error while parsing value - invalid literal"
    assert classify_error(500, body) == ErrorClass.PARSE_FAILURE


def test_backoff_doubles_from_half_a_second_and_is_capped() -> None:
    assert [backoff_delay(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_the_description_says_what_to_do_and_what_the_server_said() -> None:
    text = describe(
        ErrorClass.JINJA_MISSING, 500, '{"error":{"message":"tools param requires --jinja flag"}}'
    )
    assert (
        "restart llama-server with --jinja" in text and "tools param requires --jinja flag" in text
    )


def test_server_message_reads_llama_and_fastapi_bodies() -> None:
    assert server_message('{"error":{"message":"Loading model"}}') == "Loading model"
    assert server_message('{"detail":"Not Found"}') == "Not Found"
    assert server_message("plain   text\n") == "plain text"
