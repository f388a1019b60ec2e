"""What the loop knows about a model server: the shapes of a completion and of its failures."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


class ErrorClass(StrEnum):
    """Retry classes of provider failures, decided from the server's message text."""

    TRUNCATED_ARGS = "truncated_args"  # a tool call cut off at the token cap: split the write
    PARSE_FAILURE = "parse_failure"  # the server could not parse the model's call: fix the call
    CONTEXT_OVERFLOW = "context_overflow"  # the prompt does not fit: compact, then retry
    LOADING = "loading"  # 503 while the model loads: wait and retry
    JINJA_MISSING = "jinja_missing"  # server started without --jinja: configuration, fatal
    TRANSIENT = "transient"  # connection reset, 502/503/504: retry with backoff
    CONNECTION = "connection"  # nothing listening: retry a little, then fatal
    BAD_STREAM = "bad_stream"  # malformed SSE or a stream that died
    CANCELLED = "cancelled"  # the person (or the loop) asked to stop mid-call: not a failure
    FATAL = "fatal"  # anything else: surface and stop


class ProviderError(Exception):
    def __init__(
        self,
        message: str,
        error_class: ErrorClass,
        status: int | None = None,
        *,
        partial: Completion | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.error_class = error_class
        self.status = status
        # What had streamed before the failure (a stream that died, a cancel): kept so a turn
        # can show and record it rather than lose it.
        self.partial = partial

    @property
    def retryable(self) -> bool:
        return self.error_class in (ErrorClass.LOADING, ErrorClass.TRANSIENT, ErrorClass.CONNECTION)


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text exactly as the model produced it (possibly cut off)

    def parsed(self) -> dict[str, Any]:
        """The arguments as a dict; raises ValueError on text that is not a JSON object."""
        text = self.arguments.strip() or "{}"
        value = json.loads(text)
        if not isinstance(value, dict):
            raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
        return value


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens


@dataclass
class Timings:
    cache_n: int = 0
    prompt_n: int = 0
    predicted_n: int = 0
    prompt_per_second: float = 0.0
    predicted_per_second: float = 0.0


@dataclass
class Completion:
    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    timings: Timings | None = None
    via: str = "native"  # "native" tool calling or "constrained" (JSON-schema actions)
    raw: str = ""  # constrained: the action text exactly as generated (replayed verbatim: cache)


@dataclass
class Delta:
    """One streamed fragment, handed to the loop as it arrives."""

    content: str = ""
    reasoning: str = ""


@dataclass
class ServerProps:
    n_ctx: int | None = None
    model_path: str | None = None
    build_info: str | None = None
    supports_tools: bool | None = None
    chat_template: str | None = None
    total_slots: int | None = None
    raw: dict[str, Any] = field(default_factory=dict)


class Provider(Protocol):
    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int,
        on_delta: Callable[[Delta], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Completion:
        """One chat completion. `tools` are `{"name","description","parameters"}` dicts;
        `messages` are OpenAI-format dicts (assistant `tool_calls`, `tool` role results)."""
        ...

    def props(self) -> ServerProps: ...

    def tokenize(self, text: str) -> list[int] | None: ...

    def health(self) -> bool: ...
