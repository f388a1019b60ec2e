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
    BAD_STREAM = "bad_stream"  # malformed SSE, a reply of the wrong shape, or a stream that died
    TOO_LARGE = "too_large"  # the reply (or one SSE line) passed its byte cap: stopped
    DEADLINE = "deadline"  # nothing new for request_timeout_s (keep-alives do not extend it)
    CANCELLED = "cancelled"  # the person (or the loop) asked to stop mid-call: not a failure
    FATAL = "fatal"  # anything else: surface and stop


@dataclass(frozen=True)
class ReplyLimits:
    """What one reply may cost before the request is stopped. A server (or a model) that never
    finishes must not keep a turn alive or grow memory without bound: measured before these
    existed, `: ping` every 2 s kept a turn open forever and one 300 MB SSE line cost 1.2 GB."""

    max_reply_bytes: int = 4 * 1024 * 1024  # content + reasoning + tool names, ids, arguments
    max_line_bytes: int = 1024 * 1024  # one SSE line (a whole non-streamed body gets the reply cap)
    max_tool_calls: int = 64  # distinct `index` values in one reply
    max_error_bytes: int = 64 * 1024  # an error body is read this far, then cut


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
        # The server's count of a prompt it refused as too long, when it gave one.
        self.prompt_tokens: int | None = None

    @property
    def retryable(self) -> bool:
        return self.error_class in (ErrorClass.LOADING, ErrorClass.TRANSIENT, ErrorClass.CONNECTION)


# Tool arguments are flat records; a few levels cover every schema we ship. The cap exists
# because the model controls the text: `{"path": [[[[...]]]]}` 100k deep makes json.loads (and
# pydantic, and every later json.dumps of the history) raise RecursionError, which is not a
# ValueError and used to end the turn as an internal error instead of a call the model can fix.
MAX_ARGUMENT_DEPTH = 32


class ArgumentsTooDeep(ValueError):
    """Arguments nested deeper than MAX_ARGUMENT_DEPTH (a ValueError: an invalid-arguments case)."""


def loads_bounded(text: str, max_depth: int = MAX_ARGUMENT_DEPTH) -> Any:
    """json.loads for text the model wrote: every failure is a ValueError, nesting included."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ArgumentsTooDeep(f"arguments nested deeper than {max_depth} levels") from None
    if json_depth(value, max_depth) > max_depth:
        raise ArgumentsTooDeep(f"arguments nested deeper than {max_depth} levels")
    return value


def json_depth(value: Any, stop_at: int) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), counted without recursion and
    stopping once `stop_at` is passed."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > stop_at:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text exactly as the model produced it (possibly cut off)

    def parsed(self) -> dict[str, Any]:
        """The arguments as a dict; raises ValueError on text that is not a JSON object,
        including text nested too deeply to parse safely."""
        text = self.arguments.strip() or "{}"
        value = loads_bounded(text)
        if not isinstance(value, dict):
            raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
        return value


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # usage.prompt_tokens_details.cached_tokens (servers without timings)

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens


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
    """One streamed fragment, handed to the loop as it arrives, with where the reply stands
    (so a person watching a five-minute call sees it move; none of that is content)."""

    content: str = ""
    reasoning: str = ""
    tokens: int = 0  # fragments generated so far (llama-server streams one token a fragment)
    prompt_done: int = 0  # prompt tokens processed so far, when the server reports it
    prompt_total: int = 0
    tool_name: str = ""  # the tool call being written, once its name is known
    tool_chars: int = 0  # characters of its arguments so far
    tool_head: str = ""  # their first characters (enough to show the path or the command)
    quiet_s: float = 0.0  # seconds since the server last said anything new (liveness.py)
    # This chunk's generated text as the model wrote it: the answer and the tool calls' arguments
    # (constrained, the action's JSON), for the watch on a reply that repeats itself
    # (loop/guards/repetition.py). Empty on a progress-only delta.
    raw: str = ""


@dataclass
class ServerProps:
    n_ctx: int | None = None
    model_path: str | None = None
    build_info: str | None = None
    supports_tools: bool | None = None
    chat_template: str | None = None
    total_slots: int | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    server: str = ""  # "ollama" when known to be one (provider/ollama.py); "" otherwise
    ctx_setting: str = ""  # how the server names the window it keeps, for a notice


@dataclass(frozen=True)
class ReasoningEnd:
    """What the server said to "end the reasoning now" (reasoning_control.py): `ok`, else why
    not, for the person's notice."""

    ok: bool
    detail: str = ""


class Provider(Protocol):
    """The model, as the loop and the session use it. Everything a caller needs is here, so no
    caller probes for an attribute (`getattr(provider, "close", None)` hid a provider that
    leaked its HTTP client): llama.LlamaProvider, and testing/fake_provider.FakeProvider."""

    #: Where it talks, for the status line and the reserved ports ("" for an in-process fake).
    base_url: str

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int,
        on_delta: Callable[[Delta], None] | None = None,
        cancel: threading.Event | None = None,
        extra: dict[str, Any] | None = None,
        narrow: list[dict[str, Any]] | None = None,  # what the reply may use (llama.py)
    ) -> Completion:
        """One chat completion. `tools` are `{"name","description","parameters"}` dicts;
        `messages` are OpenAI-format dicts (assistant `tool_calls`, `tool` role results).
        `extra`: request fields merged into the body for this call (e.g. `chat_template_kwargs`);
        callers pass it only when non-empty."""
        ...

    def complete_json(
        self, messages: list[dict[str, Any]], schema: dict[str, Any], *, max_tokens: int
    ) -> str:
        """One reply constrained by a JSON schema (turn close's distill): the raw text."""
        ...

    def end_reasoning(self) -> ReasoningEnd:
        """From inside `on_delta`: end the reasoning being streamed now through the server
        (llama-server's reasoning control), the stream going on to the answer. ok False (and
        why) when the server cannot: the caller then ends the stream itself."""
        ...

    def props(self) -> ServerProps: ...

    def tokenize(self, text: str) -> list[int] | None: ...

    def health(self) -> bool: ...

    def resolved_mode(self) -> str:
        """What runs: "native" tool calls or "constrained" JSON actions, never "auto"."""
        ...

    def close(self) -> None:
        """Release what it holds (the HTTP client): the session's last act."""
        ...
