"""llama-server's OpenAI-compatible wire format, as builders (pure).

Shapes copied from llama.cpp `tools/server/server-task.cpp` (build b1-0c1e570): a first chunk with
`{"role":"assistant","content":null}`, one chunk per fragment, a final chunk with an empty delta and
the finish_reason, then (with `stream_options.include_usage`) a chunk with `choices: []` and
`usage`; `timings` ride on the very last chunk. Errors are `{"error":{"code","message","type"}}`,
as the HTTP body before streaming starts, or as a `data:` event once it has.
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "scripted.gguf"
FINGERPRINT = "scripted-0"

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    500: "server_error",
    501: "not_supported_error",
    503: "unavailable_error",
}


def sse(obj: Any) -> bytes:
    return f"data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()


SSE_DONE = b"data: [DONE]\n\n"


def _envelope(cid: str, created: int, **extra: Any) -> dict[str, Any]:
    return {
        "created": created,
        "id": cid,
        "model": MODEL,
        "system_fingerprint": FINGERPRINT,
        "object": "chat.completion.chunk",
        **extra,
    }


def delta_chunk(
    delta: dict[str, Any], cid: str, created: int, finish_reason: str | None = None
) -> dict[str, Any]:
    choice = {"finish_reason": finish_reason, "index": 0, "delta": delta}
    return {"choices": [choice], **_envelope(cid, created)}


def progress_chunk(
    processed: int, total: int, cache: int, time_ms: int, cid: str, created: int
) -> dict[str, Any]:
    """One `prompt_progress` chunk (`return_progress: true`), as llama-server streams them while
    it reads the prompt: an empty assistant delta beside the figures (shape as captured from a
    b6399+ server: `{"total":36,"cache":0,"processed":36,"time_ms":...}`)."""
    chunk = delta_chunk({"role": "assistant", "content": None}, cid, created)
    chunk["prompt_progress"] = {
        "total": total,
        "cache": cache,
        "processed": processed,
        "time_ms": time_ms,
    }
    return chunk


def usage_chunk(usage: dict[str, Any], cid: str, created: int) -> dict[str, Any]:
    return {"choices": [], **_envelope(cid, created), "usage": usage}


def usage(prompt_tokens: int, completion_tokens: int, cached: int) -> dict[str, Any]:
    return {
        "completion_tokens": completion_tokens,
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def timings(cache_n: int, prompt_n: int, predicted_n: int) -> dict[str, Any]:
    """Plausible figures for a 2-core CPU (prompt ~200 tok/s, generation ~60 tok/s, as measured
    with the real small model); nothing is actually slept."""
    prompt_ms = prompt_n / 200.0 * 1000.0
    predicted_ms = predicted_n / 60.0 * 1000.0
    return {
        "cache_n": cache_n,
        "prompt_n": prompt_n,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_ms / prompt_n if prompt_n else 0.0,
        "prompt_per_second": 200.0,
        "predicted_n": predicted_n,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_ms / predicted_n if predicted_n else 0.0,
        "predicted_per_second": 60.0,
    }


def split(text: str, size: int) -> list[str]:
    """Fragments of `size` characters: small enough that arguments split inside strings and
    escapes, as real token-by-token streams do."""
    return [text[i : i + size] for i in range(0, len(text), size)] or []


def stream_deltas(
    *, content: str, reasoning: str, calls: list[tuple[str, str, str]], piece: int
) -> list[dict[str, Any]]:
    """The deltas of one reply, in server order: reasoning, content, then each call's id and name
    followed by its argument fragments. `calls` are (id, name, arguments text)."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": None}]
    deltas += [{"reasoning_content": p} for p in split(reasoning, piece)]
    deltas += [{"content": p} for p in split(content, piece)]
    for index, (cid, name, args) in enumerate(calls):
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                ]
            }
        )
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": p}}]}
            for p in split(args, piece)
        ]
    return deltas


def completion_body(
    *,
    content: str,
    reasoning: str,
    calls: list[tuple[str, str, str]],
    finish_reason: str,
    cid: str,
    created: int,
    usage_obj: dict[str, Any],
    timings_obj: dict[str, Any],
) -> dict[str, Any]:
    """A non-streaming `chat.completion`."""
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [
            {"type": "function", "function": {"name": n, "arguments": a}, "id": i}
            for i, n, a in calls
        ]
    return {
        "choices": [{"finish_reason": finish_reason, "index": 0, "message": message}],
        "created": created,
        "model": MODEL,
        "system_fingerprint": FINGERPRINT,
        "object": "chat.completion",
        "usage": usage_obj,
        "id": cid,
        "timings": timings_obj,
    }


def error_body(status: int, message: str, type_: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "error": {
            "code": status,
            "message": message,
            "type": type_ or ERROR_TYPES.get(status, "server_error"),
            **extra,
        }
    }


def props_body(n_ctx: int, supports_tools: bool, total_slots: int = 1) -> dict[str, Any]:
    return {
        "default_generation_settings": {"n_ctx": n_ctx, "params": {"n_predict": -1}},
        "total_slots": total_slots,
        "model_alias": MODEL,
        "model_path": MODEL,
        "build_info": FINGERPRINT,
        "chat_template": "{# scripted: ChatML #}",
        "chat_template_caps": {
            "supports_tools": supports_tools,
            "supports_tool_calls": supports_tools,
        },
    }
