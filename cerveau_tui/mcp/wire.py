"""JSON-RPC 2.0 to an MCP server: newline-delimited over a sandboxed process's pipes, or
streamable HTTP. Whatever the server sends is bounded before it is parsed.

The server is untrusted code: it may write one endless line (a flood), never answer (a hang),
answer with ids we never sent, or ask us things. So a message longer than `MAX_MESSAGE` ends the
channel (the server is stopped: what it would say next is not worth the memory), a request that
has no answer within its timeout raises `McpTimeout` (the hub then stops the server), answers to
ids nobody waits for are dropped, and the server's own requests are answered "method not found"
(`ping` excepted): we offer it no sampling, no roots, no elicitation.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from ..sandbox.served import Served

#: One message from a server, at most (a tool's result included): past it the channel ends.
MAX_MESSAGE = 4 * 1024 * 1024
PROTOCOL_VERSION = "2025-06-18"
#: How often a waiting call looks at the person's stop (an answer wakes it at once).
CANCEL_POLL_S = 0.1


class McpError(Exception):
    """A server failed, or refused a request; the message is what a person (or the model) reads."""


class McpTimeout(McpError):
    pass


class McpCancelled(McpError):
    """The person stopped the turn while a call waited: the server is told, and left running."""


class Channel(Protocol):
    def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float,
        cancel: threading.Event | None = None,
    ) -> Any: ...

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None: ...

    def close(self) -> None: ...


@dataclass
class _Waiter:
    done: threading.Event = field(default_factory=threading.Event)
    message: dict[str, Any] | None = None


def _result(message: dict[str, Any], method: str) -> Any:
    err = message.get("error")
    if err is not None:
        text = err.get("message") if isinstance(err, dict) else err
        code = err.get("code") if isinstance(err, dict) else None
        raise McpError(f"{method}: the server answered an error ({code}): {str(text)[:500]}")
    return message.get("result")


class StdioChannel:
    """Newline-delimited JSON-RPC on a server's stdin and stdout; a reader thread routes answers."""

    def __init__(self, pipes: Served, max_message: int = MAX_MESSAGE) -> None:
        self.pipes = pipes
        self.max_message = max_message
        self._ids = itertools.count(1)
        self._waiting: dict[int, _Waiter] = {}
        self._lock = threading.Lock()
        self._write = threading.Lock()
        self.failure: str | None = None  # why the channel ended, once it has
        self._reader = threading.Thread(target=self._read, name="cerveau-mcp-read", daemon=True)
        self._reader.start()

    # -- reading ------------------------------------------------------------------------------
    def _read(self) -> None:
        fd = self.pipes.stdout.fileno()
        buf = bytearray()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                self._end("the server's output closed (it exited)")
                return
            buf += chunk
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    break
                line = bytes(buf[:nl])
                del buf[: nl + 1]
                self._route(line)
            if len(buf) > self.max_message:
                self._end(f"the server sent a message over {self.max_message} bytes; stopped")
                self.pipes.close()
                return

    def _route(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            # A log line on stdout: not ours to act on. RecursionError: found by probing, one
            # line of 100,000 nested brackets raised it here and ended this reader thread
            # silently; every call then waited out its timeout.
            return
        if not isinstance(message, dict):
            return
        if "method" in message:
            if "id" in message:  # the server asks us: nothing is offered but ping
                ok = message["method"] == "ping"
                reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
                if ok:
                    reply["result"] = {}
                else:
                    reply["error"] = {"code": -32601, "message": "not offered by this client"}
                self._send(reply)
            return
        mid = message.get("id")
        with self._lock:
            waiter = self._waiting.get(mid) if isinstance(mid, int) else None
        if waiter is not None:
            waiter.message = message
            waiter.done.set()

    def _end(self, why: str) -> None:
        with self._lock:
            if self.failure is None:
                self.failure = why
            waiting = list(self._waiting.values())
        for w in waiting:
            w.done.set()

    # -- writing ------------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        with self._write:
            try:
                self.pipes.stdin.write(data)
                self.pipes.stdin.flush()
            except (OSError, ValueError) as exc:
                self._end(f"could not write to the server ({exc})")
                raise McpError(self.failure or str(exc)) from exc

    def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float,
        cancel: threading.Event | None = None,
    ) -> Any:
        if self.failure is not None:
            raise McpError(self.failure)
        mid = next(self._ids)
        waiter = _Waiter()
        with self._lock:
            self._waiting[mid] = waiter
        try:
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": mid, "method": method}
            if params is not None:
                msg["params"] = params
            self._send(msg)
            deadline = time.monotonic() + timeout
            while not waiter.done.wait(min(CANCEL_POLL_S, max(deadline - time.monotonic(), 0))):
                if cancel is not None and cancel.is_set():
                    self.notify("notifications/cancelled", {"requestId": mid, "reason": "stopped"})
                    raise McpCancelled(f"{method}: stopped by the person")
                if time.monotonic() >= deadline:
                    self.notify("notifications/cancelled", {"requestId": mid, "reason": "timeout"})
                    raise McpTimeout(f"{method}: no answer within {timeout:g} s")
        finally:
            with self._lock:
                self._waiting.pop(mid, None)
        if waiter.message is None:
            raise McpError(self.failure or "the server ended")
        return _result(waiter.message, method)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        try:
            self._send(msg)
        except McpError:
            pass

    def close(self) -> None:
        self._end("closed")
        self.pipes.close()


class HttpChannel:
    """Streamable HTTP: each message a POST; the answer JSON or an event stream, both bounded.
    The harness's own connection to a URL the person configured (not through the sandbox)."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        max_message: int = MAX_MESSAGE,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url
        self.max_message = max_message
        self._ids = itertools.count(1)
        self._session: str | None = None
        self._version: str | None = None
        self._headers = dict(headers or {})
        # trust_env=False: no proxy or netrc from the person's environment decides where the
        # arguments go; follow_redirects=False: the URL configured is the URL reached.
        self._http = httpx.Client(trust_env=False, follow_redirects=False, transport=transport)

    def _post(self, message: dict[str, Any], timeout: float) -> httpx.Response:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            **self._headers,
        }
        if self._session:
            headers["Mcp-Session-Id"] = self._session
        if self._version:
            headers["MCP-Protocol-Version"] = self._version
        req = self._http.build_request(
            "POST", self.url, json=message, headers=headers, timeout=timeout
        )
        try:
            return self._http.send(req, stream=True)
        except httpx.TimeoutException as exc:
            raise McpTimeout(f"{message.get('method')}: no answer within {timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise McpError(f"{message.get('method')}: {type(exc).__name__}: {exc}") from exc

    def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float,
        cancel: threading.Event | None = None,
    ) -> Any:
        """`cancel` is not watched here: an HTTP call ends at its timeout."""
        mid = next(self._ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": mid, "method": method}
        if params is not None:
            msg["params"] = params
        resp = self._post(msg, timeout)
        try:
            if resp.status_code >= 400:
                raise McpError(f"{method}: HTTP {resp.status_code} from {self.url}")
            if sid := resp.headers.get("mcp-session-id"):
                self._session = sid[:200]
            kind = resp.headers.get("content-type", "").split(";")[0].strip()
            body = self._bounded(resp, method)
            if kind == "text/event-stream":
                message = _from_events(body, mid)
            else:
                message = json.loads(body) if body.strip() else None
        except httpx.TimeoutException as exc:
            raise McpTimeout(f"{method}: no answer within {timeout:g} s") from exc
        except (httpx.HTTPError, ValueError, RecursionError) as exc:  # RecursionError: nesting
            raise McpError(f"{method}: unreadable answer ({type(exc).__name__})") from exc
        finally:
            resp.close()
        if not isinstance(message, dict):
            raise McpError(f"{method}: no answer to request {mid}")
        result = _result(message, method)
        if method == "initialize" and isinstance(result, dict):
            self._version = str(result.get("protocolVersion", PROTOCOL_VERSION))[:40]
        return result

    def _bounded(self, resp: httpx.Response, method: str) -> bytes:
        data = bytearray()
        for chunk in resp.iter_bytes():
            data += chunk
            if len(data) > self.max_message:
                raise McpError(f"{method}: the answer is over {self.max_message} bytes; dropped")
        return bytes(data)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        try:
            self._post(msg, 10.0).close()
        except McpError:
            pass

    def close(self) -> None:
        self._http.close()


def _from_events(body: bytes, mid: int) -> dict[str, Any] | None:
    """The message answering `mid` among a server-sent event stream's `data:` events."""
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(
            line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
        )
        if not data:
            continue
        try:
            message = json.loads(data)
        except (ValueError, RecursionError):
            continue
        if isinstance(message, dict) and message.get("id") == mid:
            return message
    return None


Factory = Callable[[], Channel]
