"""Server-sent events from an OpenAI-compatible chat stream, assembled into one Completion.

Pure: lines in, deltas and a Completion out; the HTTP client lives in llama.py. Kept apart because
assembly is where streaming clients go subtly wrong: a tool call arrives as fragments keyed by
`index` (the id and name once, the arguments split anywhere, even inside a string or an escape),
several calls interleave, reasoning arrives on its own field, and `usage` and `timings` ride on
chunks that carry no choices at all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .types import Completion, Delta, ReplyLimits, Timings, ToolCall, Usage

DONE = "[DONE]"


class MalformedChunk(ValueError):
    """A `data:` line that is not a JSON object, or a chunk of the wrong shape."""


class ReplyTooLarge(Exception):
    """The reply passed a byte cap (`what` says which one, `limit` in bytes)."""

    def __init__(self, what: str, limit: int) -> None:
        self.what = what
        self.limit = limit
        super().__init__(f"{what} passed {limit} bytes")


class StreamErrorEvent(Exception):
    """The server reported an error inside the stream (`data: {"error": {...}}`), which is how
    llama-server ends a stream that fails after the first chunk was sent."""

    def __init__(self, error: Any) -> None:
        self.error = error
        super().__init__(error if isinstance(error, str) else _dumps_or_repr(error))


def iter_bounded_lines(chunks: Iterable[bytes], max_line_bytes: int) -> Iterator[bytes]:
    """Lines (without their terminator) out of raw bytes, never holding more than one line of
    `max_line_bytes`. httpx's `iter_lines` keeps buffering until a newline arrives, so a server
    that never sends one grows our memory with every byte (300 MB line: 1.2 GB RSS)."""
    pending = bytearray()
    for chunk in chunks:
        for part in chunk.splitlines(keepends=True):
            if part[-1:] in (b"\n", b"\r"):
                if pending:
                    pending += part
                    line = bytes(pending)
                    pending.clear()
                else:
                    line = part
                line = line.rstrip(b"\r\n")
                if len(line) > max_line_bytes:
                    raise ReplyTooLarge("one line of the stream", max_line_bytes)
                yield line
            else:
                pending += part
                if len(pending) > max_line_bytes:
                    raise ReplyTooLarge("one line of the stream", max_line_bytes)
    if pending:
        yield bytes(pending)


def iter_sse_data(
    lines: Iterable[str | bytes], on_comment: Callable[[], None] | None = None
) -> Iterator[str]:
    """The payloads of `data:` fields. Comments (`:` pings, sent by llama-server on long prompts),
    `event:`/`id:` fields and blank separators carry nothing a chat client needs; `on_comment`
    hears of each comment (a keep-alive: the server is there, and has nothing new to say)."""
    for raw in lines:
        line = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        line = line.rstrip("\r\n")
        if not line.startswith("data:"):
            if on_comment is not None and line.startswith(":"):
                on_comment()
            continue
        payload = line[5:]
        yield payload[1:] if payload.startswith(" ") else payload


def parse_chunk(data: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except RecursionError as exc:
        raise MalformedChunk(f"JSON nested too deeply: {data[:200]!r}") from exc
    except ValueError as exc:
        raise MalformedChunk(f"not JSON: {data[:200]!r}") from exc
    if not isinstance(chunk, dict):
        raise MalformedChunk(f"not a JSON object: {data[:200]!r}")
    if "\\ud" in data.lower():  # cheap: only a JSON escape can carry a surrogate into a str
        chunk = _whole_characters(chunk)
    if "error" in chunk:
        raise StreamErrorEvent(chunk["error"])
    return chunk


def _whole_characters(value: Any) -> Any:
    """Lone UTF-16 surrogates (`"\\ud83d"` without its pair) replaced by U+FFFD, pairs joined:
    JSON allows them, Python keeps them, and the first `.encode("utf-8")` downstream (counting
    the reply's bytes, writing a file, the next request) raised, ending the turn."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {k: _whole_characters(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_characters(v) for v in value]
    return value


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    chars: int = 0
    head: str = ""  # the first HEAD_CHARS of the arguments, for the person's progress line


#: Of a call being streamed, this much of its arguments travels with the progress: enough to
#: show `write_file parser.py`, never the whole file once per fragment.
HEAD_CHARS = 200


def _shape(what: str, value: Any, expected: str) -> MalformedChunk:
    return MalformedChunk(f"{what} is {type(value).__name__}, expected {expected}")


def _text_or_none(obj: dict[str, Any], key: str, what: str) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _shape(what, value, "a string")
    return value


@dataclass
class StreamAssembler:
    """Accumulates chunks; `feed` returns what should be shown right away.

    Every field the server controls is checked for its type here, the one place wire data
    becomes typed: a reply of the wrong shape (`"choices": "nope"`, a delta that is a number,
    arguments that are a list) is a MalformedChunk naming the field, never a TypeError from
    deep inside the loop. Everything kept counts against `limits.max_reply_bytes`."""

    limits: ReplyLimits = field(default_factory=ReplyLimits)
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    timings: Timings | None = None
    chunks: int = 0
    kept_bytes: int = 0
    generated: int = 0  # fragments of generated text or arguments (about one token each)
    prompt_progress: tuple[int, int] | None = None  # (processed, total) with `return_progress`
    moved: bool = False  # the last chunk changed something worth showing, progress included
    # The last chunk brought something new (liveness.py): the prompt read further than ever,
    # or bytes of the reply. A repeated figure, an empty delta or a usage chunk is not progress.
    advanced: bool = False
    prompt_best: int = 0  # the furthest prompt position reported, within its total
    # No prompt is longer in tokens than the request was in bytes (a template's own framing
    # aside: a few hundred tokens at most, read in seconds): a server counting up a total it
    # invents (or changes) cannot keep the call alive forever with "progress".
    prompt_cap: int = 2**53
    _prompt_total: int = 0  # the first total reported: a real server's does not change
    last_call: int | None = None  # the index of the call whose arguments arrived last
    fresh: str = ""  # the last chunk's generated text: content and arguments (Delta.raw)

    def _keep(self, text: str) -> None:
        # ASCII (nearly every fragment) is measured for free; anything else is encoded to count.
        self.kept_bytes += len(text) if text.isascii() else len(text.encode("utf-8"))
        if self.kept_bytes > self.limits.max_reply_bytes:
            raise ReplyTooLarge("the reply", self.limits.max_reply_bytes)

    def feed(self, chunk: dict[str, Any]) -> Delta | None:
        kept = self.kept_bytes
        self.advanced = False
        shown = self._feed(chunk)
        self.advanced = self.advanced or self.kept_bytes > kept
        return shown

    def _feed(self, chunk: dict[str, Any]) -> Delta | None:
        self.chunks += 1
        self.moved = False
        self.fresh = ""
        progress = chunk.get("prompt_progress")
        if isinstance(progress, dict):
            done, total = _count(progress.get("processed")), _count(progress.get("total"))
            self.prompt_progress = (done, total)
            self.moved = True
            self._prompt_total = self._prompt_total or total
            if self.prompt_best < done <= min(self._prompt_total, self.prompt_cap):
                self.prompt_best = done
                self.advanced = True
        if isinstance(chunk.get("usage"), dict):
            self.usage = usage_from(chunk["usage"])
        if isinstance(chunk.get("timings"), dict):
            self.timings = timings_from(chunk["timings"])
        choices = chunk.get("choices")
        if choices is None:
            choices = []
        if not isinstance(choices, list):
            raise _shape("choices", choices, "a list")
        shown = Delta()
        for choice in choices:
            if not isinstance(choice, dict):
                raise _shape("a choice", choice, "an object")
            finish = choice.get("finish_reason")
            if finish is not None and not isinstance(finish, str):
                raise _shape("finish_reason", finish, "a string")
            if finish:
                self.finish_reason = finish
            delta = choice.get("delta")
            if delta is None or delta == {}:
                delta = choice.get("message")
            if delta is None:
                delta = {}
            if not isinstance(delta, dict):
                raise _shape("delta", delta, "an object")
            text = _text_or_none(delta, "content", "delta.content")
            if text:
                self._keep(text)
                self.content.append(text)
                shown.content += text
                self.fresh += text
            thought = _text_or_none(delta, "reasoning_content", "delta.reasoning_content") or (
                _text_or_none(delta, "reasoning", "delta.reasoning")
            )
            if thought:
                self._keep(thought)
                self.reasoning.append(thought)
                shown.reasoning += thought
            frags = delta.get("tool_calls")
            if frags is None:
                frags = []
            if not isinstance(frags, list):
                raise _shape("delta.tool_calls", frags, "a list")
            for position, frag in enumerate(frags):
                self._add_call_fragment(frag, position)
        if shown.content or shown.reasoning:
            self.generated += 1
            self.moved = True
            return shown
        return None

    def progress(self, delta: Delta) -> Delta:
        """`delta` with where the reply stands: tokens, prompt progress, the call being written."""
        delta.tokens = self.generated
        if self.prompt_progress is not None:
            delta.prompt_done, delta.prompt_total = self.prompt_progress
        call = self.calls.get(self.last_call) if self.last_call is not None else None
        if call is not None:
            delta.tool_name = call.name
            delta.tool_chars = call.chars
            delta.tool_head = call.head
        return delta

    def _add_call_fragment(self, frag: Any, position: int) -> None:
        if not isinstance(frag, dict):
            raise _shape("a tool call", frag, "an object")
        # Servers that omit `index` (some non-streaming bodies) list calls in order.
        index = frag.get("index", position)
        cap = self.limits.max_tool_calls
        if type(index) is not int or not 0 <= index < cap:
            raise MalformedChunk(f"tool call index {index!r} is not an integer from 0 to {cap - 1}")
        call = self.calls.get(index)
        if call is None:
            if len(self.calls) >= cap:
                raise MalformedChunk(f"more than {cap} tool calls in one reply")
            call = self.calls[index] = _PartialCall()
        call_id = _text_or_none(frag, "id", "tool call id")
        if call_id:
            self._keep(call_id)
            call.id = call_id
        fn = frag.get("function")
        if fn is None:
            fn = {}
        if not isinstance(fn, dict):
            raise _shape("tool call function", fn, "an object")
        name = _text_or_none(fn, "name", "tool call name")
        if name:
            self._keep(name)
            # The name arrives whole in one fragment; a server that repeats it must not double it.
            call.name = name if not call.name or call.name == name else call.name + name
        args = fn.get("arguments")
        if isinstance(args, dict):  # some servers send parsed objects
            args = _dumps_or_repr(args)
        if args is None:
            return
        if not isinstance(args, str):
            raise _shape("tool call arguments", args, "a string")
        self._keep(args)
        call.arguments.append(args)
        call.chars += len(args)
        self.fresh += args
        if len(call.head) < HEAD_CHARS:
            call.head = (call.head + args)[:HEAD_CHARS]
        self.last_call = index
        self.generated += 1
        self.moved = True

    def completion(self, via: str = "native") -> Completion:
        calls = [
            ToolCall(id=c.id, name=c.name, arguments="".join(c.arguments))
            for _, c in sorted(self.calls.items())
        ]
        return Completion(
            content="".join(self.content),
            reasoning="".join(self.reasoning),
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage,
            timings=self.timings,
            via=via,
        )


def _dumps_or_repr(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return "(nested too deeply to show)"


def _count(value: Any) -> int:
    """A token count from the wire; anything that is not a plain non-negative number is unknown
    (0): usage is bookkeeping, and a strange figure there is no reason to lose a reply."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return max(0, min(int(value), 2**53))


def _rate(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    rate = float(value)
    return rate if math.isfinite(rate) and rate >= 0 else 0.0


def usage_from(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details")
    return Usage(
        prompt_tokens=_count(raw.get("prompt_tokens")),
        completion_tokens=_count(raw.get("completion_tokens")),
        cached_tokens=_count(details.get("cached_tokens")) if isinstance(details, dict) else 0,
    )


def timings_from(raw: dict[str, Any]) -> Timings:
    return Timings(
        cache_n=_count(raw.get("cache_n")),
        prompt_n=_count(raw.get("prompt_n")),
        predicted_n=_count(raw.get("predicted_n")),
        prompt_per_second=_rate(raw.get("prompt_per_second")),
        predicted_per_second=_rate(raw.get("predicted_per_second")),
    )


def completion_from_body(
    body: dict[str, Any], via: str = "native", limits: ReplyLimits | None = None
) -> Completion:
    """A non-streaming `chat.completion` body: one message instead of deltas, same assembly."""
    asm = StreamAssembler(limits or ReplyLimits())
    asm.feed(body)
    return asm.completion(via)
