"""Sort a server failure into a retry class by its MESSAGE TEXT.

Status codes alone cannot do it: llama-server answers a cut-off tool call, a parser failure and a
template error all with HTTP 500, and each needs a different reaction from the loop (split the
write, fix the call, fix the configuration). The texts below are the ones llama-server emits; see
shared/reference/llama-server.md.
"""

from __future__ import annotations

import json
import re

from ..redact import redact_url
from .types import ErrorClass


def public_url(url: str) -> str:
    """The server's URL as an error may say it: without `user:password@` nor a `?token=`, since
    every error reaches the chat and the session log (which the model can read): redact.py."""
    return redact_url(url)


# A cut-off call replayed in history: nlohmann::json reports the string or the document ending early.
_TRUNCATION_HINTS = (
    "missing closing quote",
    "unexpected end of input",
    "unexpected end",
    "syntax error while parsing value - invalid string",
)

_PARSE_FAILURE_HINTS = (
    "failed to parse input at pos",
    "does not match the expected peg-native format",
    "failed to parse tool call",
)

_CONTEXT_HINTS = (
    "exceed_context_size_error",
    "exceeds the available context size",
    "context length exceeded",  # vLLM / OpenAI wording
    "maximum context length",
)

_CONNECTION_HINTS = (
    "connection refused",
    "errno 111",
    "name or service not known",
    "all connection attempts failed",
)
_TRANSIENT_HINTS = (
    "connection reset",
    "errno 104",
    "server disconnected",
    "broken pipe",
    "timed out",
)

_ACTION: dict[ErrorClass, str] = {
    ErrorClass.TRUNCATED_ARGS: "the tool call was cut off at the token cap; split it into smaller calls",
    ErrorClass.PARSE_FAILURE: "the server could not parse the model's tool call; the call must be redone",
    ErrorClass.CONTEXT_OVERFLOW: "the prompt does not fit the server's context; compact the history or start the server with a larger -c",
    ErrorClass.LOADING: "the server is still loading the model; wait and retry",
    ErrorClass.JINJA_MISSING: "restart llama-server with --jinja (tool calling needs the chat template engine)",
    ErrorClass.TRANSIENT: "the server was briefly unavailable",
    ErrorClass.CONNECTION: "nothing answers at the server URL; start it (`cerveau stack up`) or fix --server",
    ErrorClass.BAD_STREAM: "the server's stream was malformed or ended early",
    ErrorClass.TOO_LARGE: "the server's reply passed its size cap; stopped",
    ErrorClass.DEADLINE: "the server's reply outlived the request deadline; stopped",
    ErrorClass.CANCELLED: "cancelled",
    ErrorClass.FATAL: "the server rejected the request",
}


def classify_error(status: int | None, body_text: str) -> ErrorClass:
    """The retry class of a failure. `status` is None when no HTTP answer arrived (connection
    failures); `body_text` is the raw body or the exception text."""
    text = body_text.lower()
    if "failed to parse tool call arguments as json" in text and any(
        h in text for h in _TRUNCATION_HINTS
    ):
        return ErrorClass.TRUNCATED_ARGS
    if any(h in text for h in _PARSE_FAILURE_HINTS):
        return ErrorClass.PARSE_FAILURE
    if any(h in text for h in _CONTEXT_HINTS):
        return ErrorClass.CONTEXT_OVERFLOW
    if "tools param requires --jinja" in text:
        return ErrorClass.JINJA_MISSING
    if "loading model" in text:
        return ErrorClass.LOADING
    if status is None:
        if any(h in text for h in _CONNECTION_HINTS):
            return ErrorClass.CONNECTION
        if any(h in text for h in _TRANSIENT_HINTS):
            return ErrorClass.TRANSIENT
        return ErrorClass.FATAL
    if status in (502, 503, 504):
        return ErrorClass.TRANSIENT
    return ErrorClass.FATAL


def server_message(body_text: str) -> str:
    """The human part of an error body: llama-server sends `{"error": {"message": ...}}`, FastAPI
    servers `{"detail": ...}`; anything else is shown as it came (trimmed)."""
    try:
        data = json.loads(body_text)
    except (ValueError, TypeError, RecursionError):  # any bytes at all may come back here
        return _squash(body_text)
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return _cut(err["message"])
        if isinstance(err, str):
            return _cut(err)
        if "detail" in data:
            try:
                return _squash(str(data["detail"]))
            except RecursionError:
                return _squash(body_text)
    return _squash(body_text)


def describe(error_class: ErrorClass, status: int | None, body_text: str, url: str = "") -> str:
    """A message a person can act on: what to do, then who said what (the URL matters when a
    config points at the wrong server)."""
    said = server_message(body_text)
    where = f"HTTP {status}" if status is not None else "no HTTP answer"
    if url:
        where += f" from {url}"
    return (
        f"{_ACTION[error_class]} ({where}: {said})" if said else f"{_ACTION[error_class]} ({where})"
    )


def backoff_delay(attempt: int, *, base: float = 0.5, cap: float = 8.0) -> float:
    """Seconds to wait before retry number `attempt` (1-based): 0.5, 1, 2, 4, 8, 8...
    No jitter: one client talks to one local server, there is no herd to spread."""
    return min(cap, base * (2 ** max(0, attempt - 1)))


def _cut(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _squash(text: str, limit: int = 400) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
