"""The window: a stable prompt prefix, then history, packed to fit n_ctx.

The system prompt holds only what never changes between turns and sessions (no paths, no dates,
no counts), so llama-server's prefix cache survives. New material is only ever appended. When the
history no longer fits, the oldest rounds after the task are replaced by a resume brief that carries
what cannot be recovered by reading the workspace: the task and what was already done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BASE_SYSTEM = (
    "You are a coding agent. You work inside the user's workspace through tools; paths are "
    "relative to the workspace root. Inspect before you change, make the change with a tool, "
    "then check it. Keep each tool call small. When the task is done, reply with a short answer "
    "and no tool call."
)


def estimate_tokens(text: str) -> int:
    """Labelled estimate (about 3.5 bytes a token for English and code)."""
    return max(1, int(len(text.encode("utf-8", errors="replace")) / 3.5))


_COSTS: dict[tuple[int, int], tuple[dict[str, Any], int]] = {}


def message_tokens(msg: dict[str, Any], count: Callable[[str], int]) -> int:
    """Tokens of one message, memoised per (message, counter): history messages never change
    once appended, and recounting the whole history every round was the loop's largest cost."""
    key = (id(msg), id(count))
    hit = _COSTS.get(key)
    if hit is not None and hit[0] is msg:
        return hit[1]
    n = _message_tokens(msg, count)
    if len(_COSTS) > 50_000:
        _COSTS.clear()
    _COSTS[key] = (msg, n)
    return n


def _message_tokens(msg: dict[str, Any], count: Callable[[str], int]) -> int:
    n = 4
    content = msg.get("content")
    if isinstance(content, str):
        n += count(content) if content else 0
    for tc in msg.get("tool_calls") or []:
        fn = tc.get("function", {})
        n += count(fn.get("name", "") + (fn.get("arguments") or ""))
    return n


def system_prompt(sections: list[str]) -> str:
    return "\n\n".join([BASE_SYSTEM, *[s for s in sections if s]])


def rounds(history: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Spans of history that must move together: an assistant message with tool calls and the
    tool results answering it (a tool result without its call is a shape no server accepts)."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(history):
        j = i + 1
        if history[i].get("role") == "assistant" and history[i].get("tool_calls"):
            while j < len(history) and history[j].get("role") == "tool":
                j += 1
        spans.append((i, j))
        i = j
    return spans


def pack(
    system: str,
    history: list[dict[str, Any]],
    *,
    budget: int,
    count: Callable[[str], int] = estimate_tokens,
    brief: Callable[[int], str] | None = None,
    keep_first: int = 1,
) -> tuple[list[dict[str, Any]], int, int]:
    """Return (messages, estimated_tokens, dropped_rounds).

    Keeps the system prompt and the first `keep_first` messages (the task), then as many of the most
    recent rounds as fit; what was dropped is replaced by one resume brief.
    """
    sys_msg = {"role": "system", "content": system}
    # Exact counts cost a /tokenize round trip per new message; they only matter near the limit.
    # Far below it (by a generous estimate), pack without asking.
    rough = sum(message_tokens(m, estimate_tokens) for m in (sys_msg, *history))
    if rough * 1.5 < budget:
        return [sys_msg, *history], rough, 0
    costs = [message_tokens(m, count) for m in history]
    total = message_tokens(sys_msg, count) + sum(costs)
    if total <= budget:
        return [sys_msg, *history], total, 0
    head = history[:keep_first]
    spans = [s for s in rounds(history) if s[0] >= keep_first]
    used = message_tokens(sys_msg, count) + sum(costs[:keep_first]) + 200  # room for the brief
    kept: list[tuple[int, int]] = []
    for a, b in reversed(spans):
        c = sum(costs[a:b])
        if used + c > budget and kept:
            break
        if used + c > budget and not kept:
            # even the latest round does not fit: keep it, truncated hard, rather than nothing
            kept.append((a, b))
            used += c
            break
        kept.append((a, b))
        used += c
    kept.reverse()
    dropped = len(spans) - len(kept)
    tail: list[dict[str, Any]] = []
    for a, b in kept:
        tail.extend(history[a:b])
    note = (
        brief(dropped)
        if brief
        else f"[harness] {dropped} earlier rounds were dropped to fit the window."
    )
    msgs = [sys_msg, *head, {"role": "user", "content": note}, *tail]
    return msgs, used, dropped
