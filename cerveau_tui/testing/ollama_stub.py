"""What the scripted server answers as Ollama: `/api/version`, `/api/show`, `/api/ps`.

For provider/ollama.py and loop/silent_cut.py: with `ollama={"num_ctx": 2048}` the server has no
`/props` (extras off) and states that window the way Ollama does, a Modelfile parameter line in
`/api/show`; `{"loaded_context": 4096}` states it in `/api/ps` only; `{}` states none.
"""

from __future__ import annotations

from typing import Any

from .wire import MODEL

VERSION = "0.6.8"


def answer(method: str, path: str, body: dict[str, Any], ollama: dict[str, Any]) -> Any:
    """(status, JSON) for an Ollama route; None for any other path."""
    if method == "GET" and path == "/api/version":
        return 200, {"version": VERSION}
    if method == "POST" and path == "/api/show":
        num_ctx = ollama.get("num_ctx")
        params = 'stop                           "<|im_end|>"'
        if num_ctx:
            params = f"num_ctx                        {num_ctx}\n{params}"
        return 200, {
            "parameters": params,
            "model_info": {"llama.context_length": 8192},
            "details": {"family": "llama"},
            "asked": body.get("model"),
        }
    if method == "GET" and path == "/api/ps":
        n = ollama.get("loaded_context")
        models = [{"name": MODEL, "model": MODEL, "context_length": n}] if n else []
        return 200, {"models": models}
    return None
