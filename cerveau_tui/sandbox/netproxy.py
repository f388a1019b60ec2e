"""The proxy a network grant goes through: the only way out of a sandboxed command's network.

The construction is Anthropic's sandbox-runtime's. The command has no route anywhere (bubblewrap:
its own network namespace, only `lo`; Landlock: TCP to one port, no UDP), and the proxy variables
point at a listener this harness serves from OUTSIDE the sandbox. The proxy opens a connection
only to what the grant names (netpolicy.decide) and resolves names itself, so the command needs no
resolver either. A program that ignores the proxy variables simply has nowhere to go: no parser
of curl's or git's options decides anything.

One port speaks HTTP CONNECT, plain HTTP forwarding and SOCKS5 (netrequest.py reads the request
and answers it); this module decides, connects, pipes, and keeps the books.

One `NetProxy` per runner holds the resolver, the limits and the live sessions; one `Session` per
granted command serves that command's listener on one thread (a connection gets its own thread,
bounded by `max_connections`) and records what it refused, so the command's result can say so.
Every socket has a timeout: a client that stalls mid-request or a tunnel idle for `idle_s` ends.
"""

from __future__ import annotations

import os
import select
import socket
import threading
from dataclasses import dataclass, field

from .command import CommandResult
from .netpolicy import IsLocal, Resolver, Verdict, assigned_here, decide, system_resolve
from .netrequest import answer

MAX_REFUSALS_NOTED = 8


@dataclass
class Limits:
    max_connections: int = 64  # at once, across every session of the runner
    header_s: float = 30.0  # to send a request (or a SOCKS greeting)
    connect_s: float = 15.0  # to reach the granted host
    idle_s: float = 300.0  # a tunnel with no byte either way for this long is closed


@dataclass(eq=False)
class Session:
    """One granted command's listener, served until `close`."""

    hosts: tuple[str, ...]
    proxy: NetProxy
    refused: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._wake_r, self._wake_w = os.pipe()
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._closed = False
        self._thread: threading.Thread | None = None

    def serve(self, listener: socket.socket | None = None, handoff: socket.socket | None = None):
        """Accept on `listener`, or on the listener the sandbox sends over `handoff` first (the
        bridge, netbridge.py, makes it inside the command's network namespace)."""
        self._thread = threading.Thread(
            target=self._run, args=(listener, handoff), name="cerveau-netproxy", daemon=True
        )
        self._thread.start()
        return self

    def _wait(self, sock: socket.socket) -> bool:
        """Until `sock` is readable (True) or the session closes (False)."""
        while True:
            ready, _, _ = select.select([sock.fileno(), self._wake_r], [], [])
            if self._wake_r in ready:
                return False
            if ready:
                return True

    def _run(self, listener: socket.socket | None, handoff: socket.socket | None) -> None:
        try:
            if listener is None and handoff is not None:
                if not self._wait(handoff):
                    return
                try:
                    _, fds, _, _ = socket.recv_fds(handoff, 16, 1)
                except OSError:
                    return
                if not fds:
                    return  # the bridge ended before it sent one: nothing to serve
                listener = socket.socket(fileno=fds[0])
            if listener is None:
                return
            with self._lock:
                if self._closed:
                    listener.close()
                    return
            listener.setblocking(True)
            while self._wait(listener):
                try:
                    conn, _ = listener.accept()
                except OSError:
                    continue
                self.proxy.start_connection(self, conn)
        finally:
            if listener is not None:
                listener.close()
            if handoff is not None:
                handoff.close()

    def track(self, conn: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._conns.add(conn)
            return True

    def untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.discard(conn)

    def refuse(self, dest: str, why: str) -> None:
        with self._lock:
            line = f"network: refused {dest} ({why})"
            if line not in self.refused:
                self.refused.append(line)

    def close(self) -> list[str]:
        """Stop serving, end the command's open connections; the notes for its result."""
        with self._lock:
            if self._closed:
                return self.notes()
            self._closed = True
            conns, self._conns = list(self._conns), set()
        os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(timeout=5)
        for c in conns:
            _shut(c)
        os.close(self._wake_r)
        os.close(self._wake_w)
        self.proxy.forget(self)
        return self.notes()

    def notes(self) -> list[str]:
        out = self.refused[:MAX_REFUSALS_NOTED]
        if len(self.refused) > MAX_REFUSALS_NOTED:
            out.append(f"network: {len(self.refused) - MAX_REFUSALS_NOTED} more refused")
        return out


class NetProxy:
    """The runner's proxy: a resolver, limits, and the sessions of the commands running now."""

    def __init__(
        self,
        resolve: Resolver = system_resolve,
        is_local: IsLocal = assigned_here,
        limits: Limits | None = None,
    ) -> None:
        self.resolve = resolve
        self.is_local = is_local
        self.limits = limits or Limits()
        self._slots = threading.BoundedSemaphore(self.limits.max_connections)
        self._lock = threading.Lock()
        self._sessions: set[Session] = set()

    def session(self, hosts: tuple[str, ...]) -> Session:
        s = Session(tuple(hosts), self)
        with self._lock:
            self._sessions.add(s)
        return s

    def forget(self, session: Session) -> None:
        with self._lock:
            self._sessions.discard(session)

    def close(self) -> None:
        """Every session ends (the runner is closing: no command of it runs any more)."""
        with self._lock:
            sessions = list(self._sessions)
        for s in sessions:
            s.close()

    def start_connection(self, session: Session, conn: socket.socket) -> None:
        if not self._slots.acquire(blocking=False):
            session.refuse("a connection", f"more than {self.limits.max_connections} at once")
            _shut(conn)
            return
        if not session.track(conn):
            self._slots.release()
            _shut(conn)
            return
        t = threading.Thread(
            target=self._serve_one, args=(session, conn), name="cerveau-netproxy-conn", daemon=True
        )
        t.start()

    def _serve_one(self, session: Session, conn: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            conn.settimeout(self.limits.header_s)
            upstream = answer(conn, lambda host, port: self._open(session, host, port))
            if upstream is not None and session.track(upstream):
                _pipe(conn, upstream, self.limits.idle_s)
        except (OSError, ValueError):
            pass
        finally:
            if upstream is not None:
                session.untrack(upstream)
                _shut(upstream)
            session.untrack(conn)
            _shut(conn)
            self._slots.release()

    def _open(self, session: Session, host: str, port: int) -> tuple[socket.socket | None, str]:
        """Decide, then connect to a decided address: (socket, "") or (None, why not)."""
        verdict: Verdict = decide(session.hosts, host, port, self.resolve, self.is_local)
        dest = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if not verdict.addresses:
            session.refuse(dest, verdict.refusal)
            return None, "refused"
        for addr in verdict.addresses:
            family = socket.AF_INET6 if ":" in addr else socket.AF_INET
            s = socket.socket(family, socket.SOCK_STREAM)
            s.settimeout(self.limits.connect_s)
            try:
                s.connect((addr, port))
            except OSError:
                s.close()
                continue
            return s, ""
        return None, "unreachable"


def _pipe(a: socket.socket, b: socket.socket, idle_s: float) -> None:
    """Copy both ways until both sides are done or nothing moves for `idle_s`."""
    a.settimeout(idle_s)  # a peer that stops reading ends the tunnel too: sendall times out
    b.settimeout(idle_s)
    open_from = {a: b, b: a}
    while open_from:
        ready, _, _ = select.select(list(open_from), [], [], idle_s)
        if not ready:
            return
        for src in ready:
            dst = open_from[src]
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if data:
                try:
                    dst.sendall(data)
                except OSError:
                    return
                continue
            del open_from[src]  # half-close: pass the end on, keep reading the other way
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass


def _shut(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()


#: The variables every common client reads (curl reads only the lower-case http_proxy; pip,
#: requests, git, npm and Go read one spelling or the other). ALL_PROXY as socks5h: the proxy
#: resolves names, the command has no resolver that works.
def proxy_env(port: int) -> dict[str, str]:
    http = f"http://127.0.0.1:{port}"
    socks = f"socks5h://127.0.0.1:{port}"
    out = {}
    for key in ("HTTP_PROXY", "HTTPS_PROXY"):
        out[key] = out[key.lower()] = http
    out["ALL_PROXY"] = out["all_proxy"] = socks
    return out


#: Cleared from a granted command's environment: "not through the proxy" means "nowhere" there,
#: so an exemption only makes a request fail in a confusing way.
NO_PROXY_KEYS = ("NO_PROXY", "no_proxy")


def tell_refusals(result: CommandResult, notes: list[str]) -> None:
    """What the proxy refused goes into the result, for the person and for the model (which
    otherwise sees only a 403 or a failed connection, and would retry rather than ask)."""
    if not notes:
        return
    result.notes.extend(notes)
    text = "\n".join(f"[harness] {n}" for n in notes)
    result.output = f"{result.output.rstrip()}\n{text}" if result.output.strip() else text
