"""Pruning: old tool outputs and long call arguments replaced by short placeholders.

The cheapest compaction (OpenCode prunes first too): a result the model already acted on is
rarely needed verbatim, and the placeholder names the call, so the model can make it again. The
written file's content in an old `write_file` call is usually the bulk of a long session; it is on
disk. Pure: copies are made, the stored history is never touched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

Message = dict[str, Any]

#: A call argument longer than this is cleared by a prune (a written file's content, mostly).
PRUNE_ARG_CHARS = 200
#: What a pruned command or path keeps: enough to say what ran.
TARGET_CHARS = 120
#: Arguments that name what a call was about, for the placeholder.
TARGET_KEYS = ("path", "command", "pattern", "query", "url", "name")


def calls_by_id(history: Sequence[Message]) -> dict[str, tuple[str, str]]:
    """tool_call_id -> (tool name, what it was about), for the placeholders."""
    out: dict[str, tuple[str, str]] = {}
    for m in history:
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            out[str(tc.get("id", ""))] = (str(fn.get("name", "tool")), _target(fn.get("arguments")))
    return out


def _target(arguments: Any) -> str:
    args = _loads(arguments)
    for key in TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            flat = " ".join(value.split())
            return flat if len(flat) <= TARGET_CHARS else flat[:TARGET_CHARS] + "…"
    return ""


def _loads(arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, str):
        return {}
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):  # the model wrote it: anything may be in there
        return {}
    return value if isinstance(value, dict) else {}


def placeholder(name: str, target: str) -> str:
    what = f"{name} {target}".strip()
    return f"[old result of {what} cleared to save room; call it again if you need it]"


def prune_message(
    msg: Message, calls: Mapping[str, tuple[str, str]], *, results: bool = True
) -> Message:
    """A pruned copy of one old message (the message itself when there is nothing to prune):
    a tool result becomes a placeholder naming its call (unless `results` is False); a call's
    long arguments are cleared (its path and command kept, cut). The history is never touched."""
    role = msg.get("role")
    if role == "tool":
        if not results:
            return msg
        name, target = calls.get(str(msg.get("tool_call_id", "")), ("tool", ""))
        text = placeholder(name, target)
        content = msg.get("content")
        if isinstance(content, str) and len(content) > len(text):
            return {**msg, "content": text}
        return msg
    if role == "assistant" and msg.get("tool_calls"):
        changed = False
        new_calls = []
        for tc in msg["tool_calls"]:
            fn = tc.get("function") or {}
            args = _loads(fn.get("arguments"))
            slim = {k: _slim(k, v) for k, v in args.items()}
            if slim != args:
                changed = True
                try:
                    text = json.dumps(slim, ensure_ascii=False)
                except (ValueError, RecursionError):  # what the model nested: keep the call
                    text = fn.get("arguments") or "{}"
                tc = {**tc, "function": {**fn, "arguments": text}}
            new_calls.append(tc)
        content = msg.get("content") or ""
        # In constrained mode the content is the action text as generated (for the cache); it
        # holds the same long arguments, and the provider re-serialises from tool_calls without it.
        if changed or len(content) > PRUNE_ARG_CHARS:
            return {**msg, "content": "", "tool_calls": new_calls}
    return msg


def _slim(key: str, value: Any) -> Any:
    if not isinstance(value, str) or len(value) <= PRUNE_ARG_CHARS:
        return value
    if key in TARGET_KEYS:
        return value[:TARGET_CHARS] + "… [cut to save room]"
    return f"[{len(value):,} characters cleared to save room; read the file if you need them]"
