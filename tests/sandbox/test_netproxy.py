"""The proxy itself, in-process (no sandbox): what it lets through reaches a loopback listener on
the host, what it refuses does not, checked from the listener's side (its accept queue, the
request lines it received)."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

import pytest

from cerveau_tui.sandbox.netproxy import Limits, NetProxy, Session
from cerveau_tui.testing.listeners import Listener, Quiet


@pytest.fixture
def served() -> Iterator[tuple[NetProxy, Listener, Quiet]]:
    proxy = NetProxy(resolve=lambda host, port: {"localhost": ["127.0.0.1"]}[host])
    ok, quiet = Listener(), Quiet()
    yield proxy, ok, quiet
    proxy.close()
    ok.close()
    quiet.sock.close()


def _session(proxy: NetProxy, hosts: tuple[str, ...]) -> tuple[Session, int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    return proxy.session(hosts).serve(listener=listener), port


def _exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(data)
        out = b""
        while chunk := c.recv(4096):
            out += chunk
        return out


def _socks(port: int, atyp: bytes, cmd: int = 1) -> tuple[socket.socket, int]:
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(b"\x05\x01\x00")
    assert c.recv(2) == b"\x05\x00"
    c.sendall(bytes([5, cmd, 0]) + atyp)
    reply = c.recv(10)
    return c, reply[1]


def test_connect_to_a_granted_host_reaches_it(served) -> None:
    proxy, ok, _ = served
    session, port = _session(proxy, (f"127.0.0.1:{ok.port}",))
    out = _exchange(
        port,
        f"CONNECT 127.0.0.1:{ok.port} HTTP/1.1\r\n\r\nGET /tunnelled HTTP/1.0\r\n\r\n".encode(),
    )
    assert out.startswith(b"HTTP/1.1 200") and out.endswith(b"ok\n")
    assert ok.lines == ["GET /tunnelled HTTP/1.0"]
    assert session.close() == []


def test_connect_to_another_port_is_refused_with_403_and_noted(served) -> None:
    proxy, ok, quiet = served
    session, port = _session(proxy, (f"127.0.0.1:{ok.port}",))
    out = _exchange(port, f"CONNECT 127.0.0.1:{quiet.port} HTTP/1.1\r\n\r\n".encode())
    assert out.startswith(b"HTTP/1.1 403")
    assert not quiet.reached()
    assert session.close() == [f"network: refused 127.0.0.1:{quiet.port} (not granted)"]


def test_a_forwarded_request_goes_in_origin_form_to_the_granted_host(served) -> None:
    proxy, ok, _ = served
    session, port = _session(proxy, (f"127.0.0.1:{ok.port}",))
    req = f"GET http://127.0.0.1:{ok.port}/path?q=1 HTTP/1.1\r\nHost: x\r\nProxy-Connection: k\r\n\r\n"
    out = _exchange(port, req.encode())
    assert out.endswith(b"ok\n") and ok.lines == ["GET /path?q=1 HTTP/1.1"]
    session.close()


def test_a_forwarded_request_to_another_host_is_refused(served) -> None:
    proxy, ok, quiet = served
    session, port = _session(proxy, (f"127.0.0.1:{ok.port}",))
    out = _exchange(port, f"GET http://127.0.0.1:{quiet.port}/ HTTP/1.1\r\n\r\n".encode())
    assert out.startswith(b"HTTP/1.1 403") and not quiet.reached()
    session.close()


def test_socks5_by_name_is_resolved_by_the_proxy(served) -> None:
    proxy, ok, _ = served
    session, port = _session(proxy, (f"localhost:{ok.port}",))
    c, code = _socks(port, b"\x03\x09localhost" + struct.pack("!H", ok.port))
    assert code == 0
    c.sendall(b"GET /by-name HTTP/1.0\r\n\r\n")
    out = b""
    while chunk := c.recv(4096):
        out += chunk
    c.close()
    assert out.endswith(b"ok\n")
    session.close()
    assert ok.lines == ["GET /by-name HTTP/1.0"]


def test_socks5_to_a_port_not_granted_gets_reply_2(served) -> None:
    proxy, ok, quiet = served
    session, port = _session(proxy, (f"127.0.0.1:{ok.port}",))
    c, code = _socks(port, b"\x01" + socket.inet_aton("127.0.0.1") + struct.pack("!H", quiet.port))
    c.close()
    assert code == 2 and not quiet.reached()
    assert session.close() == [f"network: refused 127.0.0.1:{quiet.port} (not granted)"]


def test_socks5_udp_associate_and_bind_are_refused(served) -> None:
    proxy, ok, _ = served
    session, port = _session(proxy, ())
    for cmd in (2, 3):
        c, code = _socks(port, b"\x01" + socket.inet_aton("127.0.0.1") + b"\x00\x35", cmd=cmd)
        c.close()
        assert code == 7, cmd
    session.close()


def test_any_host_does_not_reach_the_hosts_loopback(served) -> None:
    proxy, ok, _ = served
    session, port = _session(proxy, ())
    out = _exchange(port, f"CONNECT 127.0.0.1:{ok.port} HTTP/1.1\r\n\r\n".encode())
    assert out.startswith(b"HTTP/1.1 403") and ok.lines == []
    session.close()


def test_closing_the_session_ends_an_open_tunnel(served) -> None:
    proxy, ok, _ = served
    session, port = _session(proxy, (f"127.0.0.1:{ok.port}",))
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(f"CONNECT 127.0.0.1:{ok.port} HTTP/1.1\r\n\r\n".encode())
    assert c.recv(4096).startswith(b"HTTP/1.1 200")
    session.close()
    assert c.recv(4096) == b""  # the tunnel was closed, not left open
    c.close()


def test_connections_beyond_the_limit_are_closed_and_noted() -> None:
    proxy = NetProxy(limits=Limits(max_connections=1))
    session, port = _session(proxy, ())
    first = socket.create_connection(("127.0.0.1", port), timeout=5)
    first.sendall(b"\x05")  # holds its slot: a request not finished
    second = socket.create_connection(("127.0.0.1", port), timeout=5)
    assert second.recv(16) == b""
    first.close()
    second.close()
    assert session.close() == ["network: refused a connection (more than 1 at once)"]
    proxy.close()


def test_a_request_that_is_not_http_or_socks_gets_400(served) -> None:
    proxy, _, _ = served
    session, port = _session(proxy, ())
    assert _exchange(port, b"hello\r\n\r\n").startswith(b"HTTP/1.1 400")
    session.close()
