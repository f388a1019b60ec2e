"""A real HTTP server on loopback that speaks llama-server's wire format and answers each chat
request with the next entry of a script (see script.py for the entries).

    python -m cerveau_tui.testing.scripted_server --script FILE --port P [--log FILE]

Deterministic tests and scenarios run the whole harness against it: real sockets, real SSE, real
chunked transfer (so a server dying mid-stream looks exactly as it does in production), no mocks.
Tokens here are an APPROXIMATION (one token per 4 bytes); `/tokenize` says so in its answer.
"""

from __future__ import annotations

import argparse
import json
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import ollama_stub, wire
from .script import Hostile, Prefill, Reply, reply_for
from .script_state import APPROX_BYTES_PER_TOKEN, ScriptState, approx_tokens, render_prompt
from .scripted_control import CONTROL_PATH, ScriptedControl
from .template import apply_template


def _is_action_schema(body: dict[str, Any]) -> bool:
    """A `response_format` built from the tool registry (a oneOf over actions) makes replies
    action JSON; any other schema (turn close's distill) is answered with the entry's text as is."""
    rf = body.get("response_format")
    if not isinstance(rf, dict):
        return False
    schema = (rf.get("json_schema") or {}).get("schema") or rf.get("schema") or {}
    return isinstance(schema, dict) and "oneOf" in schema


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Small SSE writes on a keep-alive connection otherwise meet Nagle plus delayed ACK: ~40 ms
    # stalls per request that would be charged to the harness in every benchmark.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # requests go to the JSON log, not to stderr

    # -- plumbing --

    def _json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _not_found(self) -> None:
        self._json(404, {"detail": "Not Found"})  # what a generic OpenAI-compatible server says

    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json(400, wire.error_body(400, "invalid JSON body"))
            return None
        return body if isinstance(body, dict) else {}

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    # -- routes --

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        st = self.server.state
        st.hits[self.path] += 1
        if st.ollama is not None and (said := ollama_stub.answer("GET", self.path, {}, st.ollama)):
            self._json(*said)
        elif self.path == "/health" and st.extras:
            self._json(200, {"status": "ok"})
        elif self.path == "/props" and st.extras:
            self._json(200, {**wire.props_body(st.n_ctx, st.supports_tools), **st.props})
        elif self.path == "/slots" and st.slots is not None:
            self._json(200, st.slots.listing(st))
        elif self.path == "/v1/models":
            model = {"id": wire.MODEL, "object": "model", **st.models}
            self._json(200, {"object": "list", "data": [model]})
        else:
            self._not_found()

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        st = self.server.state
        st.hits[self.path] += 1
        body = self._body()
        if body is None:
            return
        if st.ollama is not None and (
            said := ollama_stub.answer("POST", self.path, body, st.ollama)
        ):
            self._json(*said)
            return
        if self.path == "/apply-template" and st.extras:
            self._json(200, apply_template(body, drops_reasoning=st.drops_reasoning))
            return
        if self.path.startswith("/slots/") and st.slots is not None:
            self._json(*st.slots.action(self.path, body, st))
            return
        if self.path == "/tokenize" and st.extras:
            content = body.get("content", "")
            tokens = approx_tokens(content if isinstance(content, str) else json.dumps(content))
            self._json(
                200,
                {"tokens": tokens, "approximation": f"1 token per {APPROX_BYTES_PER_TOKEN} bytes"},
            )
        elif self.path in ("/v1/chat/completions", "/chat/completions"):
            st.headers.append({k.lower(): v for k, v in self.headers.items()})
            st.record(body)
            self._chat(body)
        elif self.path == CONTROL_PATH and self.server.control is not None:
            self._json(*self.server.control.handle(body))  # scripted_control.py
        else:
            self._not_found()

    def _chat(self, body: dict[str, Any]) -> None:
        st = self.server.state
        prompt = approx_tokens(render_prompt(body))
        if st.keeps is not None:
            prompt = prompt[-st.keeps :]  # cut from the left, said nowhere but in the usage
        if len(prompt) > st.n_ctx:
            # Checked before the script moves on: the "model" never saw this request.
            msg = f"request ({len(prompt)} tokens) exceeds the available context size ({st.n_ctx} tokens), try increasing it"
            self._json(
                400,
                wire.error_body(
                    400,
                    msg,
                    "exceed_context_size_error",
                    n_prompt_tokens=len(prompt),
                    n_ctx=st.n_ctx,
                ),
            )
            return
        reply = reply_for(st.next_entry(), constrained=_is_action_schema(body))
        if reply.silent_s and not self._silent(reply.silent_s):
            return  # the client hung up: nothing to answer, as llama-server drops the task
        if reply.hostile is not None:
            self._hostile(reply.hostile, reply.prefill)
            return
        if reply.error is not None:
            status = int(reply.error["status"])
            self._json(
                status,
                wire.error_body(
                    status, str(reply.error.get("message", "")), reply.error.get("type")
                ),
            )
            return
        cap = body.get("n_predict", body.get("max_tokens"))
        pinned = body.get("id_slot")
        slot = pinned if isinstance(pinned, int) and not isinstance(pinned, bool) else 0
        cache_n, prompt_n = st.prompt_cache(prompt, max(0, slot))
        cid, created = st.new_id(), int(time.time())
        calls = [(f"call_{cid[-6:]}_{i}", n, a) for i, (n, a) in enumerate(reply.calls)]
        generated = reply.reasoning + reply.content + "".join(n + a for _, n, a in calls)
        predicted_n = len(approx_tokens(generated))
        if isinstance(cap, int) and cap >= 0:
            predicted_n = min(predicted_n, cap)
        usage_obj = wire.usage(cache_n + prompt_n, predicted_n, cache_n)
        timings_obj = wire.timings(cache_n, prompt_n, predicted_n)
        if not body.get("stream"):
            self._json(
                200,
                wire.completion_body(
                    content=reply.content,
                    reasoning=reply.reasoning,
                    calls=calls,
                    finish_reason=reply.finish_reason,
                    cid=cid,
                    created=created,
                    usage_obj=usage_obj,
                    timings_obj=timings_obj,
                ),
            )
            return
        deltas = wire.stream_deltas(
            content=reply.content, reasoning=reply.reasoning, calls=calls, piece=st.piece
        )
        chunks = [wire.delta_chunk(d, cid, created) for d in deltas]
        chunks.append(wire.delta_chunk({}, cid, created, reply.finish_reason))
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append(wire.usage_chunk(usage_obj, cid, created))
        chunks[-1]["timings"] = timings_obj
        control = self.server.control
        if control is not None:
            control.started(cid, body)
        try:
            self._stream(chunks, reply, cid, created)
        finally:
            if control is not None:
                control.finished(cid)

    def _silent(self, seconds: float) -> bool:
        """Say nothing for `seconds`, looking every 50 ms whether the client hung up (its end
        of the connection then reads as closed). False, and counted, when it did."""
        st = self.server.state
        end = time.monotonic() + seconds
        while time.monotonic() < end and not st.stopping.is_set():
            ready, _, _ = select.select([self.connection], [], [], 0.05)
            if ready and not _peek(self.connection):
                st.count_hang_up()
                self.close_connection = True
                return False
        return True

    def _prefill(self, prefill: Prefill | None, cid: str, created: int) -> None:
        """The prompt read slowly: one `prompt_progress` chunk per batch, `every_s` apart."""
        if prefill is None:
            return
        stopping = self.server.state.stopping
        for n, processed in enumerate(prefill.steps()):
            if stopping.wait(prefill.every_s):
                return
            ms = int((n + 1) * prefill.every_s * 1000)
            chunk = wire.progress_chunk(processed, prefill.total, prefill.cache, ms, cid, created)
            self._chunk(wire.sse(chunk))

    def _stream(self, chunks: list[dict[str, Any]], reply: Reply, cid: str, created: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._prefill(reply.prefill, cid, created)
        events = [wire.sse(c) for c in chunks]
        if reply.malformed:
            events.insert(min(2, len(events)), b"data: {this is not json\n\n")
        events.append(wire.SSE_DONE)
        if reply.stream_error is not None:
            # llama-server's way of failing after the first chunk: one error event, then the
            # stream simply ends (no finish_reason, no [DONE]).
            err = reply.stream_error
            status = int(err["status"])
            at = min(int(err["after_chunks"]), len(events) - 1)
            events = [
                *events[:at],
                wire.sse(wire.error_body(status, str(err.get("message", "")), err.get("type"))),
            ]
        control = self.server.control
        for sent, event in enumerate(events):
            if control is not None and control.skips(cid, event):
                continue  # the reasoning was ended through the control route
            if reply.die_after_chunks is not None and sent >= reply.die_after_chunks:
                # Vanish without the terminating chunk: the client sees an incomplete body,
                # exactly like a server that crashed or was killed.
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self._chunk(event)
            if control is not None:
                control.sent(cid, event, self.server.state.stopping)
        self._chunk(b"")

    def _hostile(self, h: Hostile, prefill: Prefill | None = None) -> None:
        """Streams a real server never sends, for the client's limits: they end when the client
        hangs up (a write fails) or the server stops."""
        stopping = self.server.state.stopping
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True  # whatever the client read, this connection is spent
        cid, created = "chatcmpl-hostile", int(time.time())
        try:
            self._prefill(prefill, cid, created)
            if h.keepalive_s is not None:
                while not stopping.wait(h.keepalive_s):
                    self._chunk(b": ping\n\n")
            elif h.endless is not None:
                event = wire.sse(wire.delta_chunk({"content": h.endless}, cid, created))
                batch = event * max(1, 16384 // len(event))
                while not stopping.is_set():
                    self._chunk(batch)
            elif h.raw_sse is not None:
                for line in h.raw_sse:
                    self._chunk(line.encode("utf-8") + b"\n\n")
                self._chunk(b"")
            elif h.long_line is not None:
                head = b'data: {"choices":[{"index":0,"delta":{"content":"'
                tail = b'"}}]}\n\n'
                self._chunk(head)
                left = max(0, h.long_line - len(head) - len(tail))
                piece = b"a" * 65536
                while left > 0 and not stopping.is_set():
                    self._chunk(piece[: min(left, len(piece))])
                    left -= len(piece)
                self._chunk(tail + wire.SSE_DONE)
                self._chunk(b"")
        except OSError:
            return  # the client hung up: the point of most of these streams


def _peek(conn: socket.socket) -> bytes:
    try:
        return conn.recv(1, socket.MSG_PEEK)
    except OSError:
        return b""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    control: ScriptedControl | None = None  # llama-server's reasoning control, when asked for

    def __init__(self, addr: tuple[str, int], state: ScriptState) -> None:
        super().__init__(addr, _Handler)
        self.state = state

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up on a kept-alive connection is normal life, not a traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ScriptedServer:
    """In-process scripted server on a free loopback port, for tests:

    with ScriptedServer({"responses": [...]}) as srv:
        provider = LlamaProvider(srv.url)
        ...
        srv.requests  # bodies received, in order
    """

    def __init__(
        self,
        script: dict[str, Any] | list[Any],
        n_ctx: int = 4096,
        supports_tools: bool = True,
        *,
        extras: bool = True,
        piece: int = 8,
        log: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        props: dict[str, Any] | None = None,
        models: dict[str, Any] | None = None,
        control: ScriptedControl | None = None,
        keeps: int | None = None,
        ollama: dict[str, Any] | None = None,
    ) -> None:
        """`props`: top-level fields merged over /props (e.g. a `chat_template` naming
        `enable_thinking`, or `chat_template_caps`), for what a caller reads of the server.
        `models`: fields merged into the model `/v1/models` lists (vLLM's `max_model_len`, a
        router's `meta`); `headers` then holds each chat request's headers, lower-cased.
        `control`: offer and honour llama-server's reasoning control (scripted_control.py).
        `keeps`: read only the last N tokens of a longer prompt and answer 200 (Ollama's
        num_ctx, a proxy trimming). `ollama`: answer Ollama's routes (ollama_stub.py)."""
        self.state = ScriptState(
            script,
            n_ctx=n_ctx,
            supports_tools=supports_tools,
            extras=extras,
            piece=piece,
            log_path=log,
        )
        self.state.props = dict(props or {})
        self.state.models = dict(models or {})
        self.state.keeps = keeps
        self.state.ollama = ollama
        self.control = control
        self._addr = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.state.requests

    @property
    def headers(self) -> list[dict[str, str]]:
        return self.state.headers

    def start(self) -> ScriptedServer:
        self.state.stopping.clear()
        self._server = _Server(self._addr, self.state)
        self._server.control = self.control
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="scripted-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m cerveau_tui.testing.scripted_server", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--script", required=True, help='JSON file: {"responses": [...]}')
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on start)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--log", help="append every request body received as a JSON line")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument(
        "--no-tools", action="store_true", help="/props says the template cannot carry tools"
    )
    ap.add_argument(
        "--no-extras", action="store_true", help="no /health, /props, /tokenize (a generic server)"
    )
    ap.add_argument("--piece", type=int, default=8, help="characters per streamed fragment")
    args = ap.parse_args(argv)
    try:
        with open(args.script, encoding="utf-8") as f:
            script = json.load(f)
        srv = ScriptedServer(
            script,
            args.n_ctx,
            not args.no_tools,
            extras=not args.no_extras,
            piece=args.piece,
            log=args.log,
            host=args.host,
            port=args.port,
        )
        srv.start()
    except (OSError, ValueError) as exc:
        print(f"scripted_server: {exc}", file=sys.stderr)
        return 2
    print(
        f"scripted server listening on {srv.url} ({len(srv.state.entries)} responses)", flush=True
    )
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
