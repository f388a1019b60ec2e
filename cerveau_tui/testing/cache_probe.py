"""The cache probe (reference/context.md): what the harness's prompts really cost a llama-server.

A small reverse proxy in front of the scripted server. Each chat request the harness sends is first
replayed to a REAL llama-server with `stream=false, max_tokens=1`, and its `timings.prompt_n`
(tokens evaluated) and `timings.cache_n` (tokens reused from the KV cache) are recorded; then the
request goes to the scripted server, whose answer the harness gets. `/props` and `/tokenize` go to
the real server, so the harness sees the real window and tokenizer. The harness's own summary call
(`is_summary`: the continuation's question last, or neither tools nor an action format) is
answered by the real server in full (the script stays in step, and the summary's cost is measured
like any other request). A refusal by the real server (a prompt over its window) is returned to
the harness as is.

    with CacheProbe(real_url, scripted.url) as probe:
        ... point the harness at probe.url ...
        probe.records  # one ProbeRecord per chat request, in order
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from ..loop.summarise import ANSWER_ONLY, CONTINUE_HEAD
from ..stack.keys import headers_for as server_headers
from . import wire

TIMEOUT_S = 600.0


@dataclass(frozen=True)
class ProbeRecord:
    kind: str  # "chat" (scripted answer) or "summary" (the real server's answer)
    prompt_n: int  # tokens the real server evaluated
    cache_n: int  # tokens it reused from its cache
    messages: int
    status: int  # the real server's HTTP status (400: it refused the prompt)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _send(self, status: int, data: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _relay(self, r: httpx.Response) -> None:
        self._send(r.status_code, r.content, r.headers.get("content-type", "application/json"))

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._relay(self.server.real.get(self.path))

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path not in ("/v1/chat/completions", "/chat/completions"):
            self._relay(self.server.real.post(self.path, content=raw))
            return
        body = json.loads(raw or b"{}")
        if is_summary(body):
            self._summary(body)
        else:
            self._chat(body, raw)

    def _measure(self, body: dict[str, Any], kind: str, max_tokens: int) -> httpx.Response:
        probe = {**body, "stream": False, "max_tokens": max_tokens, "n_predict": max_tokens}
        probe.pop("stream_options", None)
        probe.pop("return_progress", None)
        r = self.server.real.post("/v1/chat/completions", json=probe)
        t = (r.json().get("timings") or {}) if r.status_code == 200 else {}
        self.server.add(
            ProbeRecord(
                kind,
                int(t.get("prompt_n", 0)),
                int(t.get("cache_n", 0)),
                len(body.get("messages") or []),
                r.status_code,
            )
        )
        return r

    def _chat(self, body: dict[str, Any], raw: bytes) -> None:
        measured = self._measure(body, "chat", 1)
        if measured.status_code != 200:
            self._relay(measured)  # the real window refused it: so would a real session
            return
        with self.server.scripted.stream("POST", self.path, content=raw) as r:
            self.send_response(r.status_code)
            for key in ("content-type",):
                if key in r.headers:
                    self.send_header(key, r.headers[key])
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in r.iter_raw():
                if piece:
                    self.wfile.write(f"{len(piece):X}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")

    def _summary(self, body: dict[str, Any]) -> None:
        cap = int(body.get("max_tokens") or body.get("n_predict") or 256)
        r = self._measure(body, "summary", cap)
        if r.status_code != 200 or not body.get("stream"):
            self._relay(r)
            return
        # The harness streams; the real answer came whole: the same reply, as SSE.
        done = r.json()
        choice = (done.get("choices") or [{}])[0]
        content = (choice.get("message") or {}).get("content") or ""
        cid, created = str(done.get("id", "chatcmpl-probe")), int(time.time())
        chunks = [
            wire.delta_chunk({"role": "assistant", "content": content}, cid, created),
            wire.delta_chunk({}, cid, created, choice.get("finish_reason") or "stop"),
        ]
        if done.get("usage"):
            chunks.append(wire.usage_chunk(done["usage"], cid, created))
        chunks[-1]["timings"] = done.get("timings") or {}
        data = b"".join(wire.sse(c) for c in chunks) + wire.SSE_DONE
        self._send(200, data, "text/event-stream")


def is_summary(body: dict[str, Any]) -> bool:
    """The harness's own summary call: a continuation of the conversation (its question, with the
    conversation's tools in native mode, the answer-only format in constrained mode), or a
    transcript with no tools and no action format."""
    messages = body.get("messages") or [{}]
    last = messages[-1].get("content") if isinstance(messages[-1], dict) else None
    if isinstance(last, str) and last.startswith(CONTINUE_HEAD):
        return True
    return not body.get("tools") and body.get("response_format") in (None, ANSWER_ONLY)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, real_url: str, scripted_url: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.real = httpx.Client(
            base_url=real_url, timeout=TIMEOUT_S, headers=server_headers(real_url)
        )
        self.scripted = httpx.Client(base_url=scripted_url, timeout=TIMEOUT_S)
        self.records: list[ProbeRecord] = []
        self._lock = threading.Lock()

    def add(self, record: ProbeRecord) -> None:
        with self._lock:
            self.records.append(record)


class CacheProbe:
    def __init__(self, real_url: str, scripted_url: str) -> None:
        self._server = _Server(real_url.rstrip("/"), scripted_url.rstrip("/"))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def records(self) -> list[ProbeRecord]:
        return list(self._server.records)

    def start(self) -> CacheProbe:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="cache-probe", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._server.real.close()
        self._server.scripted.close()

    def __enter__(self) -> CacheProbe:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def summarise_records(records: list[ProbeRecord]) -> dict[str, Any]:
    """Median and total tokens evaluated, and the cache's share, for a benchmark or a test."""
    evaluated = sorted(r.prompt_n for r in records)
    total = sum(evaluated)
    reused = sum(r.cache_n for r in records)
    return {
        "requests": len(records),
        "total_prompt_n": total,
        "median_prompt_n": evaluated[len(evaluated) // 2] if evaluated else 0,
        "total_cache_n": reused,
        "cache_share": reused / max(1, total + reused),
    }
