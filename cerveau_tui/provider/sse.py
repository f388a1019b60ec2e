"""Server-sent events from an OpenAI-compatible chat stream, assembled into one Completion.

Pure: lines in, deltas and a Completion out; the HTTP client lives in llama.py. Kept apart because
assembly is where streaming clients go subtly wrong: a tool call arrives as fragments keyed by
`index` (the id and name once, the arguments split anywhere, even inside a string or an escape),
several calls interleave, reasoning arrives on its own field, and `usage` and `timings` ride on
chunks that carry no choices at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .types import Completion, Delta, Timings, ToolCall, Usage

DONE = "[DONE]"


class MalformedChunk(ValueError):
    """A `data:` line that is not a JSON object."""


class StreamErrorEvent(Exception):
    """The server reported an error inside the stream (`data: {"error": {...}}`), which is how
    llama-server ends a stream that fails after the first chunk was sent."""

    def __init__(self, error: Any) -> None:
        self.error = error
        super().__init__(json.dumps(error) if not isinstance(error, str) else error)


def iter_sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The payloads of `data:` fields. Comments (`:` pings, sent by llama-server on long prompts),
    `event:`/`id:` fields and blank separators carry nothing a chat client needs."""
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line.startswith("data:"):
            continue
        payload = line[5:]
        yield payload[1:] if payload.startswith(" ") else payload


def parse_chunk(data: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise MalformedChunk(f"not JSON: {data[:200]!r}") from exc
    if not isinstance(chunk, dict):
        raise MalformedChunk(f"not a JSON object: {data[:200]!r}")
    if "error" in chunk:
        raise StreamErrorEvent(chunk["error"])
    return chunk


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class StreamAssembler:
    """Accumulates chunks; `feed` returns what should be shown right away."""

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    timings: Timings | None = None
    chunks: int = 0

    def feed(self, chunk: dict[str, Any]) -> Delta | None:
        self.chunks += 1
        if isinstance(chunk.get("usage"), dict):
            self.usage = usage_from(chunk["usage"])
        if isinstance(chunk.get("timings"), dict):
            self.timings = timings_from(chunk["timings"])
        shown = Delta()
        for choice in chunk.get("choices") or []:
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or choice.get("message") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                self.content.append(text)
                shown.content += text
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(thought, str) and thought:
                self.reasoning.append(thought)
                shown.reasoning += thought
            for position, frag in enumerate(delta.get("tool_calls") or []):
                self._add_call_fragment(frag, position)
        return shown if (shown.content or shown.reasoning) else None

    def _add_call_fragment(self, frag: dict[str, Any], position: int) -> None:
        # Servers that omit `index` (some non-streaming bodies) list calls in order.
        index = frag.get("index", position)
        call = self.calls.setdefault(index, _PartialCall())
        if frag.get("id"):
            call.id = frag["id"]
        fn = frag.get("function") or {}
        if fn.get("name"):
            # The name arrives whole in one fragment; a server that repeats it must not double it.
            call.name = (
                fn["name"] if not call.name or call.name == fn["name"] else call.name + fn["name"]
            )
        args = fn.get("arguments")
        if isinstance(args, str):
            call.arguments.append(args)
        elif isinstance(args, dict):  # some servers send parsed objects
            call.arguments.append(json.dumps(args))

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


def usage_from(raw: dict[str, Any]) -> Usage:
    return Usage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
    )


def timings_from(raw: dict[str, Any]) -> Timings:
    return Timings(
        cache_n=int(raw.get("cache_n") or 0),
        prompt_n=int(raw.get("prompt_n") or 0),
        predicted_n=int(raw.get("predicted_n") or 0),
        prompt_per_second=float(raw.get("prompt_per_second") or 0.0),
        predicted_per_second=float(raw.get("predicted_per_second") or 0.0),
    )


def completion_from_body(body: dict[str, Any], via: str = "native") -> Completion:
    """A non-streaming `chat.completion` body: one message instead of deltas, same assembly."""
    asm = StreamAssembler()
    asm.feed(body)
    return asm.completion(via)
