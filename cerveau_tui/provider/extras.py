"""The server's endpoints beside chat: `/props` (else `/v1/models`), `/health`, `/tokenize`.

Asked before every turn, and degrading on servers that lack them (llama-cpp-python's server,
vLLM, Ollama): a server that answers them with an endless or hostile body must not hang or crash
the session, so each answer is read with a byte cap and within the call's deadline.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from .ollama import ollama_props
from .props import models_n_ctx, props_from, token_ids
from .reading import EXTRAS_BODY_CAP, PLAIN, Deadline, DeadlinePassed, read_body
from .sse import ReplyTooLarge
from .types import ServerProps


class ServerExtras:
    def __init__(
        self, client: httpx.Client, deadline: Callable[[], Deadline], model: str = ""
    ) -> None:
        """`deadline` starts one call's deadline on the provider's clock; `model`: the name
        chat requests send (Ollama is asked about that one)."""
        self._client = client
        self._model = model
        self._deadline = deadline
        self._props: ServerProps | None = None
        self._tokenize_missing = False

    def props(self) -> ServerProps:
        """`/props`, cached once it answered. Empty ServerProps when the server has none
        (llama-cpp-python's server, vLLM, Ollama) or cannot be reached: unknown, not invented."""
        if self._props is not None:
            return self._props
        answer = self._ask("GET", "/props")
        if answer is None:
            return ServerProps()
        status, raw = answer
        if status == 200 and isinstance(raw, dict):
            self._props = props_from(raw)
            return self._props
        if status == 404:
            # No /props (vLLM, llama-swap, a router): the window from /v1/models, once; Ollama
            # says the window it keeps only through its own API (ollama.py).
            ollama = ollama_props(self._ask, self._model)
            self._props = ollama if ollama is not None else self._models_props()
            return self._props
        return ServerProps()

    def known_props(self) -> ServerProps | None:
        """What `/props` said, if it was asked and answered; None otherwise (never asks)."""
        return self._props

    def _models_props(self) -> ServerProps:
        answer = self._ask("GET", "/v1/models")
        if answer is None or answer[0] != 200:
            return ServerProps()
        return ServerProps(n_ctx=models_n_ctx(answer[1]))

    def health(self) -> bool:
        """True when the server is up and its model loaded. Servers without `/health` are
        asked `/v1/models` instead."""
        answer = self._ask("GET", "/health")
        if answer is not None and answer[0] == 404:
            answer = self._ask("GET", "/v1/models")
        return answer is not None and answer[0] == 200

    def tokenize(self, text: str) -> list[int] | None:
        """Exact token ids from the loaded model, or None when the server cannot tokenize."""
        if self._tokenize_missing:
            return None
        answer = self._ask("POST", "/tokenize", {"content": text})
        if answer is not None and answer[0] in (400, 422):
            # llama-cpp-python's server wants {"input": ...}
            answer = self._ask("POST", "/tokenize", {"input": text})
        if answer is None:
            return None
        status, data = answer
        if status == 404:
            self._tokenize_missing = True
            return None
        return token_ids(data) if status == 200 else None

    def _ask(self, method: str, path: str, body: Any = None) -> tuple[int, Any] | None:
        """(status, parsed JSON or None) of a small request; None when no answer came."""
        deadline = self._deadline()
        try:
            with self._client.stream(method, path, json=body, headers=PLAIN) as r:
                data = read_body(r, EXTRAS_BODY_CAP, deadline, cut=False)
                status = r.status_code
        except (httpx.HTTPError, ReplyTooLarge, DeadlinePassed):
            return None
        try:
            return status, json.loads(data)
        except (ValueError, RecursionError):
            return status, None
