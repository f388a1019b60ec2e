"""The llama-server client (works, with fewer extras, against any OpenAI-compatible server).

Sync httpx: the engine runs each turn on a worker thread, so blocking here blocks nobody.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from collections.abc import Callable
from contextlib import closing
from typing import Any
from urllib.parse import urlparse

import httpx

from ..stack.capabilities import CACHE_REUSE_TOKENS
from ..stack.keys import headers_for as server_headers
from . import constrained
from .errors import backoff_delay, classify_error, describe, public_url
from .extras import ServerExtras
from .hangup import Hangup
from .liveness import (
    Deadline,
    QuietWatch,
    last_said,
    quiet_error,
    quiet_reporter,
    server_name,
    shown_delta,
)
from .props import props_from
from .reading import (
    PLAIN,
    Cancelled,
    DeadlinePassed,
    event_error,
    guarded,
    read_body,
    status_error,
    too_large,
)
from .reasoning_control import LiveCompletion, ReasoningControl, ReasoningEnd
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
from .stable_system import StableSystem
from .types import Completion, Delta, ErrorClass, ProviderError, ReplyLimits, ServerProps

__all__ = ["ACTION_MODES", "LlamaProvider", "props_from"]

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
        deadline_s: float | None = None,
        limits: ReplyLimits | None = None,
        session_header: str = "",
        session_key: Callable[[], str] | None = None,
        quiet_every_s: float = 1.0,
        n_ctx: int = 4096,
    ) -> None:
        """`timeout_s` bounds waiting for any one read and, with retries, the backoff;
        `deadline_s` (default: `timeout_s`) is the no-progress window: a call ends once the
        server said nothing new for that long, however busy it keeps the connection with
        keep-alive comments (liveness.py). `limits` caps the bytes one reply may bring (see
        ReplyLimits). `session_header`: a header naming the conversation on every chat request,
        with a value derived from `session_key()`, so a router (llama-swap, vLLM's production
        stack, LiteLLM) keeps it on the replica that holds its cache; "" sends none.
        `quiet_every_s`: how often a silent stream is looked at for the person (QuietWatch).
        `n_ctx`: the window to ask of Ollama when it states none (`options.num_ctx`)."""
        if action_mode not in ACTION_MODES:
            raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {action_mode!r}")
        self.base_url = base_url.rstrip("/")
        self._public_url = public_url(self.base_url)  # what errors say
        self.model = model
        self.n_ctx = n_ctx
        #: The server slot every request names (`id_slot`), set when the session claimed one of
        #: several (session/slot_claim.py); None: the server chooses.
        self.id_slot: int | None = None
        self.action_mode = action_mode
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.deadline_s = timeout_s if deadline_s is None else deadline_s
        if self.deadline_s <= 0:
            raise ValueError(f"deadline_s must be positive, got {self.deadline_s}")
        self.limits = limits or ReplyLimits()
        self._system = StableSystem()  # one system message on the wire per session
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
            headers=server_headers(self.base_url),  # our own server's key (stack/keys.py)
            # A connection per request: Hangup learns each call's socket as it connects.
            limits=httpx.Limits(max_keepalive_connections=0),
        )
        self._extras = ServerExtras(self._client, self._deadline, model)
        # "Stop thinking" through the server where it can (reasoning_control.py).
        self._control = ReasoningControl(self._extras._ask, self.props)
        self._live = LiveCompletion()
        self._session_header = session_header.strip()
        self._session_key = session_key
        self.quiet_every_s = quiet_every_s
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    # -- extras (degrade on servers that lack them; see extras.py) -----------------------------

    def props(self) -> ServerProps:
        """`/props`, cached once it answered. Without one (vLLM, a router), the n_ctx that
        `/v1/models` states; empty when neither says or the server cannot be reached."""
        return self._extras.props()

    def health(self) -> bool:
        """True when the server is up and its model loaded (or, without `/health`, its
        `/v1/models` answers)."""
        return self._extras.health()

    def tokenize(self, text: str) -> list[int] | None:
        """Exact token ids from the loaded model, or None when the server cannot tokenize."""
        return self._extras.tokenize(text)

    def resolved_mode(self) -> str:
        """ "native" or "constrained". Auto trusts `/props`: without a template that supports
        tools, the server would drop them silently, so only a clear yes means native."""
        if self.action_mode != "auto":
            return self.action_mode
        return "native" if self.props().supports_tools else "constrained"

    def end_reasoning(self) -> ReasoningEnd:
        """End the reasoning of the stream being read now, through llama-server's reasoning
        control; called from `on_delta` (the reading thread). Not offered: ok False, and why."""
        return self._control.end(self._live.id, self.model)

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
        extra: dict[str, Any] | None = None,
        narrow: list[dict[str, Any]] | None = None,
    ) -> Completion:
        """`narrow`: the schemas this reply may use when fewer or tighter than `tools`. Only
        constrained mode's grammar takes them (a field outside the prompt); the prompt always
        carries `tools` as given, so narrowing never costs the cached prefix (loop/narrow.py)."""
        mode = self.resolved_mode() if tools else "native"
        body = self.request_body(messages, tools, max_tokens=max_tokens, mode=mode, narrow=narrow)
        body.update(extra or {})
        self._control.arm(body)
        started = self._clock()
        # One window for the call, retries included: only progress restarts it, not a retry.
        deadline = self._deadline()
        attempt = 0
        while True:
            try:
                return self._stream_once(body, on_delta, cancel, deadline)
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

    def complete_json(
        self, messages: list[dict[str, Any]], schema: dict[str, Any], *, max_tokens: int
    ) -> str:
        """One reply constrained by a JSON schema (turn close's distill). Returns the raw text;
        the caller parses it and degrades on failure. Streamed like every call, so its prompt
        progress keeps it alive: sent in one body, it had only a clock (liveness.py)."""
        if self.resolved_mode() == "constrained":
            messages = self._system.plain(constrained.rewrite_history(messages), messages)
        body = self.request_body(messages, [], max_tokens=max_tokens, mode="native")
        body["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
        # The schema is the caller's, not an action: read the text as it is.
        return self._stream_once(body, None, None, self._deadline(), via="native").content

    def request_body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int,
        mode: str,
        narrow: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "stream": True,
            "stream_options": {"include_usage": True},
            # llama-server then streams `prompt_progress` while it reads a long prompt, minutes
            # on a CPU; other servers ignore the field.
            "return_progress": True,
            # Always capped: llama-server's default is unlimited, and n_predict wins over
            # max_tokens there, so both are sent (other servers ignore n_predict).
            "max_tokens": max_tokens,
            "n_predict": max_tokens,
            "temperature": self.temperature,
            "cache_prompt": True,
            # After a compaction the kept part is shifted into place, not read again (issue 36;
            # context/window.py); a llama-server recent enough takes it per request, whatever
            # its --cache-reuse. Other servers ignore the field.
            "n_cache_reuse": CACHE_REUSE_TOKENS,
        }
        if self.model:
            body["model"] = self.model
        if self.id_slot is not None:
            body["id_slot"] = self.id_slot
        known = self._extras.known_props()
        if known is not None and known.server == "ollama":
            # The window the session assumes, stated per request: Ollama's default would cut a
            # longer prompt silently (ollama.py; loop/silent_cut.py catches a route ignoring it).
            body["options"] = {"num_ctx": known.n_ctx or self.n_ctx}
        if tools and mode == "constrained":
            rewritten = constrained.rewrite_history(messages, tools)
            body["messages"] = self._system.constrained(messages, rewritten, tools)
            body["response_format"] = constrained.response_format(narrow or tools)
        else:
            body["messages"] = self._system.plain(messages)
            if tools:
                body["tools"] = [{"type": "function", "function": t} for t in tools]
        return body

    def _stream_once(
        self,
        body: dict[str, Any],
        on_delta: Callable[[Delta], None] | None,
        cancel: threading.Event | None,
        deadline: Deadline,
        via: str | None = None,
    ) -> Completion:
        asm = StreamAssembler(self.limits)
        self._live.clear()
        # Tokens past the cap (with room for each call's header fragment) are not progress: a
        # server ignoring the cap is then bounded by the window, as well as by the byte caps.
        cap = int(body.get("max_tokens") or 0) + self.limits.max_tool_calls
        hangup = Hangup(cancel)  # a stop shuts the connection, however silent the server is
        headers = {**PLAIN, **self._session_headers()}
        request = self._client.build_request(
            "POST", "/v1/chat/completions", json=body, headers=headers, extensions=hangup.extensions
        )
        asm.prompt_cap = len(request.content)
        via = via or ("constrained" if "response_format" in body else "native")
        answer = constrained.AnswerStream() if via == "constrained" else None
        action = constrained.ActionProgress() if via == "constrained" else None
        saw_done = False
        watch = QuietWatch(deadline, quiet_reporter(on_delta, asm, action), self.quiet_every_s)
        if cancel is not None and cancel.is_set():
            raise ProviderError("cancelled before the request was sent", ErrorClass.CANCELLED)
        try:
            with watch, hangup.watching(), closing(self._client.send(request, stream=True)) as r:
                if r.status_code != 200:
                    raise status_error(r, self.limits.max_error_bytes, deadline, self._public_url)
                encoding = r.headers.get("content-encoding", "identity").strip().lower()
                if encoding not in ("", "identity"):
                    raise MalformedChunk(
                        f"the reply is {encoding}-compressed though we asked for none"
                    )
                if "text/event-stream" not in r.headers.get("content-type", ""):
                    # A server that ignored stream=true answered with one body.
                    whole = read_body(r, self._body_cap, deadline, cancel, cut=False)
                    asm.feed(parse_chunk(whole.decode("utf-8", errors="replace")))
                    saw_done = True
                else:
                    raw = guarded(r.iter_raw(), deadline, cancel)
                    lines = iter_bounded_lines(raw, self.limits.max_line_bytes)
                    for data in iter_sse_data(lines, watch.commented):
                        if cancel is not None and cancel.is_set():
                            raise Cancelled
                        if data.strip() == DONE:
                            saw_done = True
                            break
                        chunk = parse_chunk(data)
                        self._live.seen(chunk)  # its id, for `end_reasoning`
                        delta = asm.feed(chunk)
                        if asm.advanced and asm.generated <= cap:
                            watch.progressed()
                        if asm.moved and on_delta is not None:
                            on_delta(shown_delta(delta or Delta(), asm, answer, action))
        except Cancelled as exc:
            raise ProviderError(
                "cancelled", ErrorClass.CANCELLED, partial=self._finish(asm, via, partial=True)
            ) from exc
        except (DeadlinePassed, httpx.ReadTimeout) as exc:
            # A silent read (no byte for the window) is the same fact as a window of pings.
            raise self._quiet(deadline, asm, via) from exc
        except ReplyTooLarge as exc:
            raise too_large(exc, self._public_url, self._finish(asm, via, partial=True)) from exc
        except MalformedChunk as exc:
            raise self._bad_stream(f"malformed reply from the server ({exc})", asm, via) from exc
        except StreamErrorEvent as exc:
            raise event_error(
                exc.error, self._public_url, self._finish(asm, via, partial=True)
            ) from exc
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ProviderError(
                describe(ErrorClass.CONNECTION, None, str(exc), self._public_url),
                ErrorClass.CONNECTION,
            ) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            if asm.chunks == 0:
                # Nothing received yet: the server dropped the connection, retrying is safe.
                raise ProviderError(
                    describe(ErrorClass.TRANSIENT, None, str(exc), self._public_url),
                    ErrorClass.TRANSIENT,
                ) from exc
            raise self._bad_stream(f"the stream ended early ({exc})", asm, via) from exc
        except httpx.HTTPError as exc:
            cls = classify_error(None, str(exc))
            raise ProviderError(describe(cls, None, str(exc), self._public_url), cls) from exc
        if not saw_done:
            raise self._bad_stream("the stream ended without [DONE]", asm, via)
        return self._finish(asm, via)

    # -- bounded reading (see reading.py) -------------------------------------------------------

    @property
    def _body_cap(self) -> int:
        # A whole non-streamed reply: its text is capped by the assembler, the JSON around it
        # gets one line's worth of room.
        return self.limits.max_reply_bytes + self.limits.max_line_bytes

    def _deadline(self) -> Deadline:
        return Deadline(self.deadline_s, self._clock)

    def _quiet(self, deadline: Deadline, asm: StreamAssembler, via: str) -> ProviderError:
        partial = self._finish(asm, via, partial=True)
        known = self._extras.known_props()
        llama = known is not None and bool(known.build_info or known.n_ctx)
        said = last_said(partial, asm.prompt_progress, asm.generated)
        return quiet_error(deadline, server_name(self.base_url, llama), said, partial)

    def _session_headers(self) -> dict[str, str]:
        """The conversation's affinity key: a digest of the session id (the id names a log on
        this machine; the router needs only something stable)."""
        key = self._session_key() if self._session_key is not None else ""
        if not self._session_header or not key:
            return {}
        return {self._session_header: hashlib.blake2b(key.encode(), digest_size=12).hexdigest()}

    # -- the reply -----------------------------------------------------------------------------

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
            f"{what} ({self._public_url}); received {got} before that (kept)",
            ErrorClass.BAD_STREAM,
            partial=self._finish(asm, via, partial=True),
        )

    def _new_id(self) -> str:
        with self._lock:
            return f"call_{next(self._ids):06d}"


def _is_loopback(url: str) -> bool:
    host = (urlparse(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")
