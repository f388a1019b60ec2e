"""What the extras answer (`/props`, `/tokenize`), read defensively: each field is data from
outside the process, kept only when it has the type it should."""

from __future__ import annotations

from typing import Any

from .types import ServerProps


def props_from(raw: dict[str, Any]) -> ServerProps:
    """What /props says, each field only when it has the type it should: a field of another
    type is unknown (None), never a crash when the loop reads it."""
    gen = _dict(raw.get("default_generation_settings"))
    caps = _dict(raw.get("chat_template_caps"))
    supports = caps.get("supports_tools")
    return ServerProps(
        n_ctx=_positive_int(gen.get("n_ctx")) or _positive_int(raw.get("n_ctx")),
        model_path=_str(raw.get("model_path")),
        build_info=_str(raw.get("build_info")),
        supports_tools=supports if isinstance(supports, bool) else None,
        chat_template=_str(raw.get("chat_template")),
        total_slots=_positive_int(raw.get("total_slots")),
        raw=raw,
    )


def models_n_ctx(data: Any) -> int | None:
    """The context window a `/v1/models` answer states for its (first) model: `meta.n_ctx`
    (llama-server's router), vLLM's `max_model_len`. Never `meta.n_ctx_train`: that is what
    the model was trained on, not the window the server was started with. None when no model
    says: unknown, and the configured n_ctx is used."""
    models = data.get("data") if isinstance(data, dict) else None
    if not isinstance(models, list):
        return None
    for model in models:
        if not isinstance(model, dict):
            continue
        meta = _dict(model.get("meta"))
        n_ctx = _positive_int(meta.get("n_ctx")) or _positive_int(model.get("max_model_len"))
        if n_ctx:
            return n_ctx
    return None


def token_ids(data: Any) -> list[int] | None:
    """The ids in a `/tokenize` answer (plain ints, or {"id": ...} with pieces), or None."""
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, list):
        return None
    ids: list[int] = []
    for t in tokens:
        tid = t.get("id") if isinstance(t, dict) else t
        if type(tid) is not int:
            return None  # a count built on strange ids would be an invention: unknown
        ids.append(tid)
    return ids


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _positive_int(value: Any) -> int | None:
    return value if type(value) is int and value > 0 else None
