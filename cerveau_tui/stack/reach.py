"""Reaching a server: a free loopback port, a GET that never goes through a proxy to loopback
and carries our key, and "does something answer here", once or until it does.

Split from server.py (the supervisor of one process): these serve the supervisor, `stack status`,
`ensure_server` and the app's wait for a configured server alike.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx

from cerveau_tui.redact import redact_url
from cerveau_tui.stack import keys
from cerveau_tui.stack.errors import Progress


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now. The kernel picks it (bind to 0), so two servers started
    at once do not collide on a guessed number."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def bindable(port: int | None, host: str = "127.0.0.1") -> int | None:
    """`port` if nobody listens on it right now, else None."""
    if not port:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # As llama-server binds (SO_REUSEADDR): the last server's connections in TIME_WAIT
        # do not keep its port from the next one.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return None
    return port


def http_get(url: str, timeout_s: float) -> httpx.Response:
    # Loopback never goes through a proxy: with HTTP_PROXY set (CI machines reaching PyPI through
    # one), httpx would otherwise send our /health polls to the proxy, which cannot reach them.
    host = httpx.URL(url).host
    local = host in ("127.0.0.1", "localhost", "::1")
    with httpx.Client(trust_env=not local, timeout=timeout_s, headers=keys.headers_for(url)) as c:
        return c.get(url)


def probe(url: str, timeout_s: float = 2.0) -> bool:
    """True when something OpenAI-compatible answers: llama-server has /health, other servers
    (llama-cpp-python's, vLLM, Ollama) at least /v1/models."""
    base = url.rstrip("/")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    for path in ("/health", "/v1/models"):
        try:
            if http_get(base + path, timeout_s).status_code == 200:
                return True
        except (httpx.HTTPError, httpx.InvalidURL):
            continue
    return False


#: Seconds between attempts to reach a server that does not answer: soon at first (it may be
#: starting), then every 15 s, without end; the person quits or starts the server.
RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0, 15.0)


def wait_until_answers(
    url: str,
    progress: Progress,
    *,
    answers: Callable[[str], bool] = probe,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Block until something answers at `url`, saying each failed attempt as a `disconnected`
    stage. Returns the attempts that failed. Before this, a dead --server URL got a session built
    on nothing and a chat line "ready"; the first turn then failed after the request timeout.
    The progress callback stops the wait by raising (the app's does when the person quits)."""
    failed = 0
    while not answers(url):
        delay = RETRY_DELAYS[min(failed, len(RETRY_DELAYS) - 1)]
        failed += 1
        shown = redact_url(url, person=True)  # the person's screen: whose credential, not its value
        progress(
            "disconnected", None, f"nothing answers at {shown}; retry {failed} in {delay:.0f}s"
        )
        sleep(delay)
    return failed
