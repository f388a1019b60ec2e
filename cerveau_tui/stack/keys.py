"""The API key of a server this harness started, and the header that carries it.

llama.cpp warns that a server without a key answers any web page (CORS allows all origins): a
page open in the person's browser could drive the model or read `/slots`, and a key stops it. Each
start gets a new key, passed on the server's stdin (`--api-key-file /dev/stdin`), never in argv
(every user reads /proc/PID/cmdline). Every client of ours that talks to that server (the
provider, the slot client, the template check, the stack's own probes) asks `headers_for(url)`,
so the key travels only in the Authorization header: no prompt, message or session log holds it.

Another process of ours may be handed the URL alone: `cerveau run --server URL` on a `stack up`
server, the e2e tests' child CLI on the fixture's server. Each managed server's key sits beside its
record in the run folder (mode 0600, removed with the record), and `headers_for` finds it there
for a loopback URL no key is remembered for, after checking that the record's process still runs
(a stale record's key is no one's).
"""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

import httpx

_lock = threading.Lock()
_keys: dict[tuple[str, int], str] = {}


def new_key() -> str:
    return secrets.token_urlsafe(32)


def _origin(url: str) -> tuple[str, int] | None:
    try:
        u = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return None
    port = u.port or (443 if u.scheme == "https" else 80)
    # Our servers bind 127.0.0.1; a person may write localhost for the same listener.
    return ("127.0.0.1" if u.host == "localhost" else u.host, port)


def remember(url: str, key: str) -> None:
    origin = _origin(url)
    if origin is not None:
        with _lock:
            _keys[origin] = key


def forget(url: str) -> None:
    origin = _origin(url)
    if origin is not None:
        with _lock:
            _keys.pop(origin, None)


def headers_for(url: str, run_dir: Path | None = None) -> dict[str, str]:
    """`{"Authorization": "Bearer KEY"}` for a server we hold the key of, else {}. `run_dir`:
    where the stack's records are (default: the cache that $CERVEAU_CACHE_DIR names)."""
    origin = _origin(url)
    if origin is None:
        return {}
    with _lock:
        key = _keys.get(origin)
    if key is None and origin[0] in ("127.0.0.1", "localhost", "::1"):
        key = _from_records(origin, run_dir)
    return {"Authorization": f"Bearer {key}"} if key else {}


def _from_records(origin: tuple[str, int], run_dir: Path | None) -> str | None:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.state import live_records

    run_dir = run_dir or stack_paths().run_dir
    for rec in live_records(run_dir):
        if _origin(rec.url) == origin and (key := read_key(run_dir, rec.pid)):
            remember(rec.url, key)
            return key
    return None


def key_path(run_dir: Path, pid: int) -> Path:
    return run_dir / f"server-{pid}.key"


def write_key(run_dir: Path, pid: int, key: str) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    path = key_path(run_dir, pid)
    tmp = path.with_suffix(".key.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key + "\n")
    os.replace(tmp, path)
    return path


def read_key(run_dir: Path, pid: int) -> str | None:
    try:
        return key_path(run_dir, pid).read_text().strip() or None
    except OSError:
        return None


def adopt(run_dir: Path, pid: int, url: str) -> None:
    """Use the key a `stack up` server's starter left beside its record, when there is one."""
    key = read_key(run_dir, pid)
    if key:
        remember(url, key)
