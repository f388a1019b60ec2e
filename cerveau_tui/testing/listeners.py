"""Host-side listeners for network probes: what reached them is the evidence, never what the
command printed."""

from __future__ import annotations

import socket
import threading


class Listener:
    """A host listener that records the first line of each request and answers `ok`."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving, then close. A bare `sock.close()` left the thread blocked in accept()
        on the fd NUMBER, and the next socket given that number (a later test's scripted
        llama-server) had its connections taken by dozens of such threads: the suite hung in
        ScriptedServer.stop. shutdown() wakes the accept first."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._thread.join(timeout=5)
        self.sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    self.lines.append(data.split(b"\r\n", 1)[0].decode())
                    conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
                except OSError:
                    pass


class Quiet:
    """A listener nobody serves: after the fact, its accept queue says whether anyone came."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def reached(self) -> bool:
        try:
            self.sock.accept()[0].close()
            return True
        except BlockingIOError:
            return False


class Datagrams:
    """A UDP socket on the host: after the fact, whether any datagram arrived."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def received(self) -> bool:
        try:
            self.sock.recvfrom(64)
            return True
        except BlockingIOError:
            return False
