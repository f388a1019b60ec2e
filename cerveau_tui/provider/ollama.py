"""Ollama, found and asked what window it keeps: its `num_ctx` cuts a longer prompt silently.

Ollama answers the OpenAI routes (`/v1/chat/completions`) with a 200 however long the prompt: it
keeps the end that fits its `num_ctx` (a model's Modelfile `PARAMETER num_ctx`, else the server's
OLLAMA_CONTEXT_LENGTH, 2,048 or 4,096 by version) and drops the rest. It has no `/props`, so it
is known by `/api/version`; `/api/show` states a model's `num_ctx` when one is set, and `/api/ps`
the `context_length` a loaded model runs with. What is found becomes the session's window, and
each request states it as `options.num_ctx` (Ollama's own API honours it; its OpenAI route may
not, which loop/silent_cut.py then catches from the prompt tokens it reports).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .types import ServerProps

Ask = Callable[[str, str, Any], "tuple[int, Any] | None"]

_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def ollama_props(ask: Ask, model: str) -> ServerProps | None:
    """ServerProps for an Ollama server (its window when it states one, and how to name it);
    None when the server is not Ollama."""
    version = ask("GET", "/api/version", None)
    if version is None or version[0] != 200 or not isinstance(version[1], dict):
        return None
    if "version" not in version[1]:
        return None
    name = model or _first_model(ask)
    num_ctx, said = _shown_num_ctx(ask, name)
    if num_ctx is None:
        num_ctx, said = _loaded_context(ask, name)
    return ServerProps(
        n_ctx=num_ctx,
        server="ollama",
        ctx_setting=said or "Ollama's num_ctx (its default, OLLAMA_CONTEXT_LENGTH)",
        raw={"ollama_version": version[1].get("version")},
    )


def _first_model(ask: Ask) -> str:
    answer = ask("GET", "/v1/models", None)
    data = answer[1].get("data") if answer and isinstance(answer[1], dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return str(data[0].get("id") or "")
    return ""


def _shown_num_ctx(ask: Ask, name: str) -> tuple[int | None, str]:
    if not name:
        return None, ""
    answer = ask("POST", "/api/show", {"model": name})
    if answer is None or answer[0] != 200 or not isinstance(answer[1], dict):
        return None, ""
    params = answer[1].get("parameters")
    found = _NUM_CTX.search(params) if isinstance(params, str) else None
    if found is None:
        return None, ""
    n = int(found.group(1))
    return n, f"Ollama's num_ctx = {n:,}, from /api/show for {name}"


def _loaded_context(ask: Ask, name: str) -> tuple[int | None, str]:
    answer = ask("GET", "/api/ps", None)
    models = answer[1].get("models") if answer and isinstance(answer[1], dict) else None
    for m in models if isinstance(models, list) else []:
        if not isinstance(m, dict) or (name and name not in (m.get("name"), m.get("model"))):
            continue
        n = m.get("context_length")
        if isinstance(n, int) and n > 0:
            return n, f"Ollama's num_ctx = {n:,}, the loaded model's context (/api/ps)"
    return None, ""
