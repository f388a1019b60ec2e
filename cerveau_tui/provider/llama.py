"""The llama-server client (works, with fewer extras, against any OpenAI-compatible server).

Sync httpx: the engine runs each turn on a worker thread, so blocking here blocks nobody.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from . import constrained
from .errors import backoff_delay, classify_error, describe
from .sse import (
    DONE,
    MalformedChunk,
    ReplyTooLarge,
    StreamAssembler,
    StreamErrorEvent,
    iter_bounded_lines,
    iter_sse_data,
    parse_chunk,
)
from .types import Completion, Delta, ErrorClass, ProviderError, ReplyLimits, ServerProps

ACTION_MODES = ("auto", "native", "constrained")
# /props, /tokenize, /health: a real answer is kilobytes (a long /tokenize a few MB).
EXTRAS_BODY_CAP = 16 * 1024 * 1024
# We ask for an uncompressed stream: decompressing is where a small answer becomes a large one
# (a gzip chunk of 64 KB can expand a thousandfold before any cap of ours sees it).
_PLAIN = {"Accept-Encoding": "identity"}


class _DeadlinePassed(Exception):
    pass


class _Cancelled(Exception):
    pass


class LlamaProvider:
    def __init__(
        self,
        base_url: str,
        *,
        model: str = "",
        action_mode: str = "auto",
        temperature: float = 0.2,
        timeout_s: float = 300,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        max_retries: int = 3,
        transport: httpx.BaseTransport | None = None,
        deadline_s: float | None = None,
        limits: ReplyLimits | None = None,
    ) -> None:
        """`timeout_s` bounds waiting for any one read and, with retries, the whole call;
        `deadline_s` (default: `timeout_s`) bounds one call however busy the server keeps the
        connection: keep-alive comments and endless output do not extend it. `limits` caps the
        bytes one reply may bring (see ReplyLimits)."""
        if action_mode not in ACTION_MODES:
            raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {action_mode!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.action_mode = action_mode
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.deadline_s = timeout_s if deadline_s is None else deadline_s
        if self.deadline_s <= 0:
            raise ValueError(f"deadline_s must be positive, got {self.deadline_s}")
        self.limits = limits or ReplyLimits()
        self.max_retries = max_retries
        self._sleep = sleep
        self._clock = clock
        # Connecting is quick or hopeless on loopback; reading may wait minutes on a slow CPU model.
        # A silent read never outlasts the deadline either (the deadline is checked between reads).
        read_s = min(timeout_s, self.deadline_s)
        self._client = httpx.Client(
            base_url=self.base_url,
            timeout=httpx.Timeout(read_s, connect=min(10.0, read_s)),
            transport=transport,
            # A proxy from HTTP_PROXY must never sit between us and a server on this machine.
            trust_env=not _is_loopback(self.base_url),
        )
        self._props: ServerProps | None = None
        self._tokenize_missing = False
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    # -- extras (degrade on servers that lack them) -------------------------------------------

    def props(self) -> ServerProps:
        """`/props`, cached once it answered. Empty ServerProps when the server has none
        (llama-cpp-python's server, vLLM, Ollama) or cannot be reached: unknown, not invented."""
        if self._props is not None:
            return self._props
        answer = self._extra("GET", "/props")
        if answer is None:
            return ServerProps()
        status, raw = answer
        if status == 404:
            self._props = ServerProps()  # definitive: this server has no /props; do not ask again
            return self._props
        if status != 200 or not isinstance(raw, dict):
            return ServerProps()
        self._props = props_from(raw)
        return self._props

    def _extra(self, method: str, path: str, body: Any = None) -> tuple[int, Any] | None:
        """(status, parsed JSON or None) of a small request, read with a byte cap and within the
        deadline; None when no answer came. The extras are asked before every turn: a server
        that answers them with an endless or hostile body must not hang or crash the session."""
        deadline_at = self._clock() + self.deadline_s
        try:
            with self._client.stream(method, path, json=body, headers=_PLAIN) as r:
                data = self._read_body(r, EXTRAS_BODY_CAP, deadline_at, cut=False)
                status = r.status_code
        except (httpx.HTTPError, ReplyTooLarge, _DeadlinePassed):
            return None
        try:
            return status, json.loads(data)
        except (ValueError, RecursionError):
            return status, None

    def health(self) -> bool:
        """True when the server is up and its model loaded. Servers without `/health` are
        asked `/v1/models` instead."""
        answer = self._extra("GET", "/health")
        if answer is not None and answer[0] == 404:
            answer = self._extra("GET", "/v1/models")
        return answer is not None and answer[0] == 200

    def tokenize(self, text: str) -> list[int] | None:
        """Exact token ids from the loaded model, or None when the server cannot tokenize."""
        if self._tokenize_missing:
            return None
        answer = self._extra("POST", "/tokenize", {"content": text})
        if answer is not None and answer[0] in (400, 422):
            # llama-cpp-python's server wants {"input": ...}
            answer = self._extra("POST", "/tokenize", {"input": text})
        if answer is None:
            return None
        status, data = answer
        if status == 404:
            self._tokenize_missing = True
            return None
        tokens = data.get("tokens") if status == 200 and isinstance(data, dict) else None
        if not isinstance(tokens, list):
            return None
        ids: list[int] = []
        for t in tokens:
            tid = t.get("id") if isinstance(t, dict) else t
            if type(tid) is not int:
                return None  # a count built on strange ids would be an invention: unknown
            ids.append(tid)
        return ids

    def resolved_mode(self) -> str:
        """ "native" or "constrained". Auto trusts `/props`: without a template that supports
        tools, the server would drop them silently, so only a clear yes means native."""
        if self.action_mode != "auto":
            return self.action_mode
        return "native" if self.props().supports_tools else "constrained"

    def close(self) -> None:
        self._client.close()

    # -- chat ----------------------------------------------------------------------------------

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int,
        on_delta: Callable[[Delta], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Completion:
        mode = self.resolved_mode() if tools else "native"
        body = self.request_body(messages, tools, max_tokens=max_tokens, mode=mode)
        started = self._clock()
        # One deadline for the call, retries included: a retry must not restart the clock.
        deadline_at = started + self.deadline_s
        attempt = 0
        while True:
            try:
                return self._stream_once(body, on_delta, cancel, deadline_at)
            except ProviderError as err:
                attempt += 1
                if not err.retryable or attempt > self.max_retries:
                    raise
                shown = err.partial
                if shown is not None and (shown.content or shown.reasoning or shown.tool_calls):
                    raise  # a retry would show the person the same text twice
                delay = backoff_delay(attempt)
                # The timeout bounds the whole call, retries included: a person waiting on a
                # turn should not sit through minutes of backoff against a dead server.
                if self._clock() - started + delay > self.timeout_s:
                    raise
                if cancel is not None and cancel.is_set():
                    raise ProviderError("cancelled", ErrorClass.CANCELLED) from err
                self._sleep(delay)

    def complete_json(self, messages: list[dict[str, Any]], schema: dict[str, Any], *, max_tokens: int) -> str:
        """One non-streamed reply constrained by a JSON schema (turn close's distill). Returns
        the raw text; the caller parses it and degrades on failure."""
        if self.resolved_mode() == "constrained":
            messages = constrained.rewrite_history(messages)
        body = self.request_body(messages, [], max_tokens=max_tokens, mode="native")
        body.update(stream=False, response_format={"type": "json_schema", "json_schema": {"schema": schema}})
        body.pop("stream_options", None)
        deadline_at = self._clock() + self.deadline_s
        try:
            with self._client.stream("POST", "/v1/chat/completions", json=body, headers=_PLAIN) as r:
                if r.status_code != 200:
                    text = self._error_text(r, deadline_at)
                    cls = classify_error(r.status_code, text)
                    raise ProviderError(
                        describe(cls, r.status_code, text, self.base_url), cls, r.status_code
                    )
                data = self._read_body(r, self._body_cap, deadline_at, cut=False)
        except httpx.HTTPError as exc:
            raise ProviderError(f"no answer from {self.base_url}: {exc}", ErrorClass.CONNECTION) from exc
        except ReplyTooLarge as exc:
            raise self._too_large(exc, None) from exc
        except _DeadlinePassed as exc:
            raise self._deadline(None) from exc
        try:
            reply = json.loads(data)
            content = reply["choices"][0]["message"].get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as exc:
            raise ProviderError(
                f"unreadable reply from {self.base_url}: not a chat completion", ErrorClass.BAD_STREAM
            ) from exc
        return content if isinstance(content, str) else ""

    def request_body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int,
        mode: str,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "stream": True,
            "stream_options": {"include_usage": True},
            # Always capped: llama-server's default is unlimited, and n_predict wins over
            # max_tokens there, so both are sent (other servers ignore n_predict).
            "max_tokens": max_tokens,
            "n_predict": max_tokens,
            "temperature": self.temperature,
            "cache_prompt": True,
        }
        if self.model:
            body["model"] = self.model
        if tools and mode == "constrained":
            body["messages"] = constrained.rewrite_history(messages, tools)
            body["response_format"] = constrained.response_format(tools)
        else:
            body["messages"] = messages
            if tools:
                body["tools"] = [{"type": "function", "function": t} for t in tools]
        return body

    def _stream_once(
        self,
        body: dict[str, Any],
        on_delta: Callable[[Delta], None] | None,
        cancel: threading.Event | None,
        deadline_at: float,
    ) -> Completion:
        asm = StreamAssembler(self.limits)
        via = "constrained" if "response_format" in body else "native"
        answer = constrained.AnswerStream() if via == "constrained" else None
        saw_done = False
        if cancel is not None and cancel.is_set():
            raise ProviderError("cancelled before the request was sent", ErrorClass.CANCELLED)
        try:
            with self._client.stream(
                "POST", "/v1/chat/completions", json=body, headers=_PLAIN
            ) as r:
                if r.status_code != 200:
                    text = self._error_text(r, deadline_at)
                    cls = classify_error(r.status_code, text)
                    raise ProviderError(
                        describe(cls, r.status_code, text, self.base_url), cls, r.status_code
                    )
                encoding = r.headers.get("content-encoding", "identity").strip().lower()
                if encoding not in ("", "identity"):
                    raise MalformedChunk(f"the reply is {encoding}-compressed though we asked for none")
                if "text/event-stream" not in r.headers.get("content-type", ""):
                    # A server that ignored stream=true answered with one body.
                    whole = self._read_body(r, self._body_cap, deadline_at, cancel, cut=False)
                    asm.feed(parse_chunk(whole.decode("utf-8", errors="replace")))
                    saw_done = True
                else:
                    raw = self._guarded(r.iter_raw(), deadline_at, cancel)
                    lines = iter_bounded_lines(raw, self.limits.max_line_bytes)
                    for data in iter_sse_data(lines):
                        if cancel is not None and cancel.is_set():
                            raise _Cancelled
                        if data.strip() == DONE:
                            saw_done = True
                            break
                        delta = asm.feed(parse_chunk(data))
                        if delta is not None and on_delta is not None:
                            if answer is not None:
                                delta = Delta(
                                    content=answer.feed(delta.content), reasoning=delta.reasoning
                                )
                            if delta.content or delta.reasoning:
                                on_delta(delta)
        except _Cancelled as exc:
            raise ProviderError(
                "cancelled", ErrorClass.CANCELLED, partial=self._finish(asm, via, partial=True)
            ) from exc
        except _DeadlinePassed as exc:
            raise self._deadline(self._finish(asm, via, partial=True)) from exc
        except ReplyTooLarge as exc:
            raise self._too_large(exc, self._finish(asm, via, partial=True)) from exc
        except MalformedChunk as exc:
            raise self._bad_stream(f"malformed reply from the server ({exc})", asm, via) from exc
        except StreamErrorEvent as exc:
            text = _dumps_error(exc.error)
            cls = classify_error(_status_of(exc.error), text)
            raise ProviderError(
                describe(cls, _status_of(exc.error), text, self.base_url),
                cls,
                _status_of(exc.error),
                partial=self._finish(asm, via, partial=True),
            ) from exc
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ProviderError(
                describe(ErrorClass.CONNECTION, None, str(exc), self.base_url),
                ErrorClass.CONNECTION,
            ) from exc
        except httpx.ReadTimeout as exc:
            raise ProviderError(
                f"no answer from {self.base_url} within {self.timeout_s:g}s; the model may be too slow for this prompt (raise the request timeout or shorten the context)",
                ErrorClass.FATAL,
                partial=self._finish(asm, via, partial=True),
            ) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            if asm.chunks == 0:
                # Nothing received yet: the server dropped the connection, retrying is safe.
                raise ProviderError(
                    describe(ErrorClass.TRANSIENT, None, str(exc), self.base_url),
                    ErrorClass.TRANSIENT,
                ) from exc
            raise self._bad_stream(f"the stream ended early ({exc})", asm, via) from exc
        except httpx.HTTPError as exc:
            cls = classify_error(None, str(exc))
            raise ProviderError(describe(cls, None, str(exc), self.base_url), cls) from exc
        if not saw_done:
            raise self._bad_stream("the stream ended without [DONE]", asm, via)
        return self._finish(asm, via)

    # -- bounded reading -----------------------------------------------------------------------

    @property
    def _body_cap(self) -> int:
        # A whole non-streamed reply: its text is capped by the assembler, the JSON around it
        # gets one line's worth of room.
        return self.limits.max_reply_bytes + self.limits.max_line_bytes

    def _guarded(
        self, chunks: Iterator[bytes], deadline_at: float, cancel: threading.Event | None = None
    ) -> Iterator[bytes]:
        """The raw chunks, checked against the deadline and the cancel flag after every read,
        so neither waits for a data line: `: ping` comments carry none."""
        for chunk in chunks:
            if self._clock() > deadline_at:
                raise _DeadlinePassed
            if cancel is not None and cancel.is_set():
                raise _Cancelled
            yield chunk

    def _read_body(
        self,
        r: httpx.Response,
        cap: int,
        deadline_at: float,
        cancel: threading.Event | None = None,
        *,
        cut: bool,
    ) -> bytes:
        """The body, at most `cap` bytes: cut there (`cut=True`, for error texts) or refused."""
        buf = bytearray()
        for chunk in self._guarded(r.iter_raw(), deadline_at, cancel):
            buf += chunk
            if len(buf) > cap:
                if cut:
                    return bytes(buf[:cap])
                raise ReplyTooLarge("the reply", cap)
        return bytes(buf)

    def _error_text(self, r: httpx.Response, deadline_at: float) -> str:
        try:
            data = self._read_body(r, self.limits.max_error_bytes, deadline_at, cut=True)
        except _DeadlinePassed:
            data = b"(the error body did not finish before the deadline)"
        return data.decode("utf-8", errors="replace")

    def _too_large(self, exc: ReplyTooLarge, partial: Completion | None) -> ProviderError:
        return ProviderError(
            f"the server sent more than {_size(exc.limit)} in {exc.what}; stopped "
            f"({self.base_url}). A runaway or hostile server, or a reply far beyond the "
            "token cap: lower max_tokens, or check what is listening at the server URL",
            ErrorClass.TOO_LARGE,
            partial=partial,
        )

    def _deadline(self, partial: Completion | None) -> ProviderError:
        return ProviderError(
            f"the server kept the reply going for more than {self.deadline_s:g} s without "
            f"finishing ({self.base_url}); stopped. Keep-alive pings or endless output do not "
            "extend the deadline; if the model is only slow, raise request_timeout_s",
            ErrorClass.DEADLINE,
            partial=partial,
        )

    def _finish(self, asm: StreamAssembler, via: str, *, partial: bool = False) -> Completion:
        done = asm.completion(via)
        if via == "constrained":
            # A partial reply is read as a cut-off one: a recognisable call keeps its raw text.
            reason = "length" if partial else done.finish_reason
            done.raw = done.content
            done.content, done.tool_calls = constrained.parse_action(
                done.content, reason, self._new_id
            )
        for call in done.tool_calls:
            if not call.id:
                call.id = self._new_id()
        return done

    def _bad_stream(self, what: str, asm: StreamAssembler, via: str) -> ProviderError:
        got = f"{asm.chunks} chunk(s), {sum(map(len, asm.content))} characters of content"
        return ProviderError(
            f"{what} ({self.base_url}); received {got} before that (kept)",
            ErrorClass.BAD_STREAM,
            partial=self._finish(asm, via, partial=True),
        )

    def _new_id(self) -> str:
        with self._lock:
            return f"call_{next(self._ids):06d}"


def props_from(raw: dict[str, Any]) -> ServerProps:
    """What /props says, each field only when it has the type it should: a field of another
    type is unknown (None), never a crash when the loop reads it."""
    gen = _dict(raw.get("default_generation_settings"))
    caps = _dict(raw.get("chat_template_caps"))
    supports = caps.get("supports_tools")
    return ServerProps(
        n_ctx=_positive_int(gen.get("n_ctx")) or _positive_int(raw.get("n_ctx")),
        model_path=_str(raw.get("model_path")),
        build_info=_str(raw.get("build_info")),
        supports_tools=supports if isinstance(supports, bool) else None,
        chat_template=_str(raw.get("chat_template")),
        total_slots=_positive_int(raw.get("total_slots")),
        raw=raw,
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _positive_int(value: Any) -> int | None:
    return value if type(value) is int and value > 0 else None


def _size(n: int) -> str:
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KB"
    return f"{n} bytes"


def _dumps_error(error: Any) -> str:
    try:
        return json.dumps({"error": error})
    except (ValueError, TypeError, RecursionError):
        return '{"error": "(an error event nested too deeply to show)"}'


def _status_of(error: Any) -> int | None:
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) else None


def _is_loopback(url: str) -> bool:
    from urllib.parse import urlparse

    host = (urlparse(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")
