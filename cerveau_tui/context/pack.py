"""The pieces every request is made of: the stable system prompt, token counts, rounds.

The system prompt holds only what never changes between turns and sessions (no paths, no dates,
no counts), so llama-server's prefix cache survives. What the request holds of the history, and
how it is compacted when the window fills, is context/window.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..text_safety import inert_markers

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
    text = count(content) if isinstance(content, str) and content else 0
    calls = 0
    for tc in msg.get("tool_calls") or []:
        fn = tc.get("function", {})
        calls += count(fn.get("name", "") + (fn.get("arguments") or ""))
    if calls and isinstance(content, str) and content.lstrip().startswith("{"):
        # Constrained mode keeps the action text as generated beside the calls it parsed to, and
        # sends ONE of them: counting both read a 4k window as full at a third (measured).
        return n + max(text, calls)
    return n + text + calls


def system_prompt(sections: list[str]) -> str:
    """The sections come from files and servers (AGENTS.md, skills, MCP tools' descriptions):
    their chat-template markers are broken, as a message's are (text_safety.inert_markers)."""
    return "\n\n".join([BASE_SYSTEM, *[inert_markers(s) for s in sections if s]])


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
