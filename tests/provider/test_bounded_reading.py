"""The pieces that keep a reply bounded: the line splitter, error texts, the extras."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from cerveau_tui.provider.constrained import AnswerStream, parse_action
from cerveau_tui.provider.errors import server_message
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.props import props_from
from cerveau_tui.provider.sse import ReplyTooLarge, iter_bounded_lines
from cerveau_tui.provider.types import ErrorClass, ProviderError, ReplyLimits

DEEP = "[" * 100_000 + "]" * 100_000


def test_lines_split_on_any_terminator_even_across_chunks() -> None:
    chunks = [b"data: a\r", b"\ndata: b\n", b"da", b"ta: c\rlast"]
    lines = [x for x in iter_bounded_lines(chunks, 64) if x]
    assert lines == [b"data: a", b"data: b", b"data: c", b"last"]


def test_a_line_arriving_in_small_pieces_is_refused_once_past_the_cap() -> None:
    seen = 0

    def pieces() -> Iterator[bytes]:
        nonlocal seen
        while True:
            seen += 10
            yield b"x" * 10

    with pytest.raises(ReplyTooLarge):
        list(iter_bounded_lines(pieces(), 1000))
    assert seen <= 1010  # stopped reading right after the cap, not at the end of the line


def test_an_error_body_nested_too_deeply_is_shown_as_text() -> None:
    assert server_message('{"detail": ' + DEEP + "}").startswith('{"detail": [[[')
    assert server_message(DEEP).startswith("[[[")


def test_props_of_the_wrong_types_are_unknown() -> None:
    props = props_from(
        {
            "default_generation_settings": [],
            "chat_template_caps": "yes",
            "total_slots": "2",
            "model_path": 5,
            "n_ctx": -1,
        }
    )
    assert (props.n_ctx, props.supports_tools, props.total_slots, props.model_path) == (
        None,
        None,
        None,
        None,
    )


def test_a_constrained_answer_streams_whole_through_split_escapes() -> None:
    text = '{"answer": "a \\"b\\" \\u00e9\\n' + "z" * 10_000 + '"}'
    stream = AnswerStream()
    shown = "".join(stream.feed(text[i : i + 3]) for i in range(0, len(text), 3))
    assert shown == 'a "b" é\n' + "z" * 10_000


def test_a_fenced_action_is_read_and_a_fence_of_spaces_is_plain_text() -> None:
    _, calls = parse_action(
        '```json\n{"tool": "bash", "arguments": {"command": "ls"}}\n```', "stop", lambda: "c1"
    )
    assert [(c.name, c.parsed()) for c in calls] == [("bash", {"command": "ls"})]
    # A long run of spaces inside a fence: quadratic for the regex this replaced.
    text = "```" + " " * 200_000 + "x"
    assert parse_action(text, "stop", lambda: "c2") == (text, [])


@contextmanager
def serving(body: bytes, content_type: str = "application/json") -> Iterator[str]:
    """A server that answers every request with the same body (status 200)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:
                pass

        do_GET = do_POST = _answer  # noqa: N815 - stdlib names

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def test_extras_answering_with_deep_json_degrade_to_unknown() -> None:
    with serving(DEEP.encode()) as url:
        p = LlamaProvider(url)
        assert (p.props().n_ctx, p.tokenize("hi")) == (None, None)


def test_a_non_streamed_reply_past_the_cap_is_too_large() -> None:
    body = b'{"choices": [{"message": {"content": "' + b"a" * 300_000 + b'"}}]}'
    with serving(body) as url:
        p = LlamaProvider(url, limits=ReplyLimits(max_reply_bytes=64_000, max_line_bytes=64_000))
        with pytest.raises(ProviderError) as info:
            p.complete_json([{"role": "user", "content": "x"}], {"type": "object"}, max_tokens=8)
        with pytest.raises(ProviderError) as streamed:
            p.complete([{"role": "user", "content": "x"}], [], max_tokens=8)
    assert info.value.error_class == ErrorClass.TOO_LARGE
    assert streamed.value.error_class == ErrorClass.TOO_LARGE


def test_a_non_streamed_reply_of_the_wrong_shape_is_a_bad_stream() -> None:
    with serving(b'{"choices": "nope"}') as url:
        with pytest.raises(ProviderError) as info:
            LlamaProvider(url).complete([{"role": "user", "content": "x"}], [], max_tokens=8)
    assert info.value.error_class == ErrorClass.BAD_STREAM
