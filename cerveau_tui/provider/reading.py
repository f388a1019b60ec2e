"""Reading a server's reply within bounds: a byte cap, the no-progress window (liveness.py), the
cancel flag, and the ProviderErrors that say which bound stopped it.

Apart from the client because none of it needs a connection: a response's chunks in, bytes or
an error out. Measured before these bounds existed, `: ping` every 2 s kept a turn open forever
and one 300 MB SSE line cost 1.2 GB (see ReplyLimits).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx

from .errors import classify_error, describe
from .liveness import Deadline
from .sse import ReplyTooLarge
from .types import Completion, ErrorClass, ProviderError

# /props, /tokenize, /health: a real answer is kilobytes (a long /tokenize a few MB).
EXTRAS_BODY_CAP = 16 * 1024 * 1024
# We ask for an uncompressed stream: decompressing is where a small answer becomes a large one
# (a gzip chunk of 64 KB can expand a thousandfold before any cap of ours sees it).
PLAIN = {"Accept-Encoding": "identity"}


class DeadlinePassed(Exception):
    pass


class Cancelled(Exception):
    pass


def guarded(
    chunks: Iterator[bytes], deadline: Deadline, cancel: threading.Event | None = None
) -> Iterator[bytes]:
    """The raw chunks, checked against the no-progress window and the cancel flag after every
    read, so neither waits for a data line: `: ping` comments carry none."""
    for chunk in chunks:
        if deadline.passed():
            raise DeadlinePassed
        if cancel is not None and cancel.is_set():
            raise Cancelled
        yield chunk


def read_body(
    r: httpx.Response,
    cap: int,
    deadline: Deadline,
    cancel: threading.Event | None = None,
    *,
    cut: bool,
) -> bytes:
    """The body, at most `cap` bytes: cut there (`cut=True`, for error texts) or refused."""
    buf = bytearray()
    for chunk in guarded(r.iter_raw(), deadline, cancel):
        buf += chunk
        if len(buf) > cap:
            if cut:
                return bytes(buf[:cap])
            raise ReplyTooLarge("the reply", cap)
    return bytes(buf)


def status_error(r: httpx.Response, cap: int, deadline: Deadline, base_url: str) -> ProviderError:
    """A reply with a status other than 200, classified by its (cut) error text."""
    try:
        data = read_body(r, cap, deadline, cut=True)
    except DeadlinePassed:
        data = b"(the error body did not finish before the deadline)"
    text = data.decode("utf-8", errors="replace")
    cls = classify_error(r.status_code, text)
    err = ProviderError(describe(cls, r.status_code, text, base_url), cls, r.status_code)
    err.prompt_tokens = _prompt_tokens_of(text)
    return err


def _prompt_tokens_of(text: str) -> int | None:
    """llama-server's own count of a prompt it refused (`error.n_prompt_tokens`), if it said."""
    try:
        n = json.loads(text)["error"]["n_prompt_tokens"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return n if isinstance(n, int) and n > 0 else None


def event_error(error: Any, base_url: str, partial: Completion | None) -> ProviderError:
    """An `{"error": ...}` event inside the stream, classified like a status error."""
    text = _dumps_error(error)
    status = _status_of(error)
    cls = classify_error(status, text)
    return ProviderError(describe(cls, status, text, base_url), cls, status, partial=partial)


def too_large(exc: ReplyTooLarge, base_url: str, partial: Completion | None) -> ProviderError:
    return ProviderError(
        f"the server sent more than {_size(exc.limit)} in {exc.what}; stopped "
        f"({base_url}). A runaway or hostile server, or a reply far beyond the "
        "token cap: lower max_tokens, or check what is listening at the server URL",
        ErrorClass.TOO_LARGE,
        partial=partial,
    )


def _size(n: int) -> str:
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KB"
    return f"{n} bytes"


def _dumps_error(error: Any) -> str:
    try:
        return json.dumps({"error": error})
    except (ValueError, TypeError, RecursionError):
        return '{"error": "(an error event nested too deeply to show)"}'


def _status_of(error: Any) -> int | None:
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) else None
