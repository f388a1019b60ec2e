"""The llama-server client (works, with fewer extras, against any OpenAI-compatible server).

Sync httpx: the engine runs each turn on a worker thread, so blocking here blocks nobody.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from . import constrained
from .errors import backoff_delay, classify_error, describe
from .sse import DONE, MalformedChunk, StreamAssembler, StreamErrorEvent, iter_sse_data, parse_chunk
from .types import Completion, Delta, ErrorClass, ProviderError, ServerProps

ACTION_MODES = ("auto", "native", "constrained")


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
    ) -> None:
        if action_mode not in ACTION_MODES:
            raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {action_mode!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.action_mode = action_mode
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._sleep = sleep
        self._clock = clock
        # Connecting is quick or hopeless on loopback; reading may wait minutes on a slow CPU model.
        self._client = httpx.Client(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
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
        try:
            r = self._client.get("/props")
        except httpx.HTTPError:
            return ServerProps()
        if r.status_code == 404:
            self._props = ServerProps()  # definitive: this server has no /props; do not ask again
            return self._props
        if r.status_code != 200:
            return ServerProps()
        try:
            raw = r.json()
        except ValueError:
            return ServerProps()
        self._props = props_from(raw)
        return self._props

    def health(self) -> bool:
        """True when the server is up and its model loaded. Servers without `/health` are
        asked `/v1/models` instead."""
        try:
            r = self._client.get("/health")
            if r.status_code == 404:
                r = self._client.get("/v1/models")
        except httpx.HTTPError:
            return False
        return r.status_code == 200

    def tokenize(self, text: str) -> list[int] | None:
        """Exact token ids from the loaded model, or None when the server cannot tokenize."""
        if self._tokenize_missing:
            return None
        try:
            r = self._client.post("/tokenize", json={"content": text})
            if r.status_code in (400, 422):  # llama-cpp-python's server wants {"input": ...}
                r = self._client.post("/tokenize", json={"input": text})
        except httpx.HTTPError:
            return None
        if r.status_code == 404:
            self._tokenize_missing = True
            return None
        if r.status_code != 200:
            return None
        try:
            tokens = r.json().get("tokens")
        except (ValueError, AttributeError):
            return None
        return (
            [t if isinstance(t, int) else t.get("id", 0) for t in tokens]
            if isinstance(tokens, list)
            else None
        )

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
        attempt = 0
        while True:
            try:
                return self._stream_once(body, on_delta, cancel)
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
        try:
            r = self._client.post("/v1/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise ProviderError(f"no answer from {self.base_url}: {exc}", ErrorClass.CONNECTION) from exc
        if r.status_code != 200:
            cls = classify_error(r.status_code, r.text)
            raise ProviderError(describe(cls, r.status_code, r.text, self.base_url), cls, r.status_code)
        try:
            return str(r.json()["choices"][0]["message"].get("content") or "")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"unreadable reply from {self.base_url}", ErrorClass.BAD_STREAM) from exc

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
    ) -> Completion:
        asm = StreamAssembler()
        via = "constrained" if "response_format" in body else "native"
        answer = constrained.AnswerStream() if via == "constrained" else None
        saw_done = False
        if cancel is not None and cancel.is_set():
            raise ProviderError("cancelled before the request was sent", ErrorClass.CANCELLED)
        try:
            with self._client.stream("POST", "/v1/chat/completions", json=body) as r:
                if r.status_code != 200:
                    text = r.read().decode("utf-8", errors="replace")
                    cls = classify_error(r.status_code, text)
                    raise ProviderError(
                        describe(cls, r.status_code, text, self.base_url), cls, r.status_code
                    )
                if "text/event-stream" not in r.headers.get("content-type", ""):
                    # A server that ignored stream=true answered with one body.
                    asm.feed(parse_chunk(r.read().decode("utf-8", errors="replace")))
                    saw_done = True
                else:
                    for data in iter_sse_data(r.iter_lines()):
                        if cancel is not None and cancel.is_set():
                            raise ProviderError(
                                "cancelled",
                                ErrorClass.CANCELLED,
                                partial=self._finish(asm, via, partial=True),
                            )
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
        except MalformedChunk as exc:
            raise self._bad_stream(f"malformed SSE line from the server ({exc})", asm, via) from exc
        except StreamErrorEvent as exc:
            text = json.dumps({"error": exc.error})
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
    gen = raw.get("default_generation_settings") or {}
    caps = raw.get("chat_template_caps") or {}
    supports = caps.get("supports_tools")
    return ServerProps(
        n_ctx=gen.get("n_ctx") if isinstance(gen.get("n_ctx"), int) else raw.get("n_ctx"),
        model_path=raw.get("model_path"),
        build_info=raw.get("build_info"),
        supports_tools=supports if isinstance(supports, bool) else None,
        chat_template=raw.get("chat_template"),
        total_slots=raw.get("total_slots"),
        raw=raw,
    )


def _status_of(error: Any) -> int | None:
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) else None


def _is_loopback(url: str) -> bool:
    from urllib.parse import urlparse

    host = (urlparse(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")
