"""Hanging up on the server when the person stops: the connection shut from another thread.

Measured: Ctrl+C while llama-server read a long prompt took 25.8 s to give control back (during
generation, 1.2 s). The cancel flag is checked between reads, and a server reading a prompt
sends nothing for seconds at a time (llama-server holds even its headers until the first batch;
vLLM says nothing at all), so the reading thread sat in `recv` until the next byte. Closing the
socket from another thread does not wake a blocked `recv` on Linux (the call keeps the file
open, and the server sees nothing); `shutdown` does both: the read returns at once, and the
server sees the connection end, drops the request and frees its slot.

The socket is learned from httpx's documented `trace` extension as the connection is made, so
every chat request needs a connection of its own (the client keeps none alive: a reused one
makes no connect event). A transport given by a test has no socket: the flag alone then stops
the call, between reads, as before.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx

from .reading import Cancelled

#: How often the watcher looks at the cancel flag (the flag is any Event-like object, and
#: LinkedCancel's `wait` polls anyway).
LOOK_EVERY_S = 0.05

_CONNECTED = ("connection.connect_tcp.complete", "connection.start_tls.complete")


class Hangup:
    """One call's watcher: `extensions` go into the request, `with hangup.watching():` runs the
    thread for as long as the call reads. `hung_up`: the connection was shut on cancel."""

    def __init__(self, cancel: Any) -> None:
        self._cancel = cancel
        self._lock = threading.Lock()
        self._stream: Any = None
        self._ended = threading.Event()
        self.hung_up = False
        self.extensions = {"trace": self.trace}  # for the request (httpx's trace extension)

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event in _CONNECTED:
            with self._lock:
                self._stream = info.get("return_value")  # the TLS stream replaces the TCP one

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Around the call's reading: the watcher runs; once we hung up, whatever the read then
        says (the server "disconnected without sending a response", a body cut short, even a
        clean end) is the person's stop, never a broken server to retry."""
        if self._cancel is not None:
            threading.Thread(target=self._watch, name="hangup", daemon=True).start()
        try:
            yield
        except httpx.TransportError as exc:
            if self.hung_up:
                raise Cancelled from exc
            raise
        finally:
            with self._lock:
                self._ended.set()  # from here the socket may be another call's: never shut it
            # Not joined: the watcher sees `_ended` within LOOK_EVERY_S and ends, and `_shut`
            # checks it under the lock, so a late watcher shuts nothing; joining cost every
            # model call up to LOOK_EVERY_S.
        if self.hung_up:
            raise Cancelled

    def _watch(self) -> None:
        while not self._ended.is_set():
            if self._cancel.wait(LOOK_EVERY_S):
                self._shut()
                return

    def _shut(self) -> None:
        with self._lock:
            if self._ended.is_set() or self._stream is None:
                return
            sock = _socket_of(self._stream)
            if sock is None:
                return
            # Said before the shutdown: the reading thread wakes at once and asks (once seen
            # after it, a stop read as a dropped connection and was retried).
            self.hung_up = True
            with contextlib.suppress(OSError):  # already closed by the server: nothing to end
                sock.shutdown(socket.SHUT_RDWR)


def _socket_of(stream: Any) -> socket.socket | None:
    try:
        sock = stream.get_extra_info("socket")
    except Exception:  # noqa: BLE001 - a backend without it: the flag alone stops the call
        return None
    return sock if isinstance(sock, socket.socket) else None
