"""What a client asks the network proxy for, read off the wire and answered (netproxy.py decides
and connects: `open_upstream(host, port)` gives the upstream socket, or None and why not).

Three requests on one port, told apart by the first byte (SOCKS5 starts with 0x05, an HTTP request
with a letter):
- HTTP CONNECT host:port: a tunnel (https, git over https, anything curl -p sends);
- an absolute-URI HTTP request (`GET http://host/path`): forwarded once in origin form, without
  the Proxy-* headers; what follows on that connection goes to the same host, never another;
- SOCKS5 CONNECT (RFC 1928; domain, IPv4, IPv6; no authentication). BIND and UDP ASSOCIATE are
  refused: a datagram relay would be a way around "TCP only".
A refusal is a 403 or SOCKS reply 2 ("not allowed by ruleset"), so a client says what happened.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from collections.abc import Callable

#: host, port -> (the connected upstream socket, "") or (None, "refused" | "unreachable")
Open = Callable[[str, int], "tuple[socket.socket | None, str]"]
MAX_HEADER = 64 * 1024


def answer(conn: socket.socket, open_upstream: Open) -> socket.socket | None:
    """Read one request from `conn` and answer it; the upstream to pipe to, or None (answered
    with a refusal or an error, or the client left)."""
    first = conn.recv(1, socket.MSG_PEEK)
    if not first:
        return None
    if first == b"\x05":
        return _socks5(conn, open_upstream)
    return _http(conn, open_upstream)


# -- HTTP: CONNECT, or one absolute-URI request forwarded ---------------------------------------
def _http(conn: socket.socket, open_upstream: Open) -> socket.socket | None:
    # What came after the head (a request body, or the first bytes of a tunnel) goes on.
    head, _, body = _read_head(conn).partition(b"\r\n\r\n")
    line, _, headers = head.partition(b"\r\n")
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        _reply(conn, 400, "not an HTTP proxy request")
        return None
    method, target, version = parts
    if method.upper() == "CONNECT":
        host, port = _split_hostport(target, None)
        if host is None or port is None:
            _reply(conn, 400, "CONNECT needs host:port")
            return None
        up, why = open_upstream(host, port)
        if up is None:
            _reply(conn, 403 if why == "refused" else 502, _why(host, port, why))
            return None
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if body:
            up.sendall(body)
        return up
    if not target.lower().startswith("http://"):
        _reply(conn, 400, "a proxy request names an absolute http:// URL (https: use CONNECT)")
        return None
    authority, slash, path = target[7:].partition("/")
    authority = authority.rpartition("@")[2]  # userinfo is the server's business, not ours
    host, port = _split_hostport(authority, 80)
    if host is None or port is None:
        _reply(conn, 400, "no host in the URL")
        return None
    up, why = open_upstream(host, port)
    if up is None:
        _reply(conn, 403 if why == "refused" else 502, _why(host, port, why))
        return None
    kept = [
        h
        for h in headers.split(b"\r\n")
        if h and not h.lower().startswith((b"proxy-connection:", b"proxy-authorization:"))
    ]
    request = f"{method} {slash or '/'}{path} {version}\r\n".encode("latin-1")
    up.sendall(request + b"".join(h + b"\r\n" for h in kept) + b"\r\n" + body)
    return up


# -- SOCKS5 (RFC 1928): no authentication, CONNECT only ------------------------------------------
def _socks5(conn: socket.socket, open_upstream: Open) -> socket.socket | None:
    _ver, count = _recv_exact(conn, 2)
    methods = _recv_exact(conn, count)
    if 0 not in methods:
        conn.sendall(b"\x05\xff")
        return None
    conn.sendall(b"\x05\x00")
    _ver, cmd, _rsv, atyp = _recv_exact(conn, 4)
    if atyp == 1:
        host = str(ipaddress.IPv4Address(_recv_exact(conn, 4)))
    elif atyp == 4:
        host = str(ipaddress.IPv6Address(_recv_exact(conn, 16)))
    elif atyp == 3:
        host = _recv_exact(conn, _recv_exact(conn, 1)[0]).decode("idna", errors="strict")
    else:
        conn.sendall(_socks_reply(8))  # address type not supported
        return None
    (port,) = struct.unpack("!H", _recv_exact(conn, 2))
    if cmd != 1:
        conn.sendall(_socks_reply(7))  # only CONNECT: no BIND, no UDP ASSOCIATE
        return None
    up, why = open_upstream(host, port)
    if up is None:
        conn.sendall(_socks_reply(2 if why == "refused" else 4))
        return None
    conn.sendall(_socks_reply(0))
    return up


def _why(host: str, port: int, why: str) -> str:
    if why == "refused":
        return f"cerveau: {host}:{port} is not granted to this command (ask for it)"
    return f"cerveau: {host}:{port} could not be reached"


def _reply(conn: socket.socket, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = (text + "\n").encode()
    conn.sendall(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: "
        f"{len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


def _socks_reply(code: int) -> bytes:
    return bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0])


def _split_hostport(text: str, default: int | None) -> tuple[str | None, int | None]:
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    elif ":" in text:
        return None, None  # a bare IPv6 address needs brackets here
    else:
        host, port_text = text, ""
    if not host:
        return None, None
    if not port_text:
        return host, default
    return (host, int(port_text)) if port_text.isdigit() else (None, None)


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = conn.recv(n - len(out))
        if not chunk:
            raise ValueError("the client closed mid-request")
        out += chunk
    return out


def _read_head(conn: socket.socket) -> bytes:
    """The request line and headers (and whatever body bytes came with them)."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEADER:
            raise ValueError("request head too large")
        chunk = conn.recv(65536)
        if not chunk:
            raise ValueError("the client closed mid-request")
        data += chunk
    return data
