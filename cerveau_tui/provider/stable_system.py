"""One system message on the wire per session, in constrained mode too.

Constrained mode writes the tool list and the action format into the system message
(constrained.rewrite_history). Rewritten per request, that message changed whenever the tools
offered did (R1's read-only round) and was absent from the requests that carry no tools (the
window's summary, turn close's distill): the server's cached prefix broke at the first token, and
the session showed the model two system messages. So the first rewrite for a given system text is
remembered and sent again for that text, unless a request offers tools it did not list (leaving
discussion mode): then the new list replaces it, once.
"""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]


class StableSystem:
    def __init__(self) -> None:
        self._sent: dict[str, tuple[frozenset[str], str]] = {}  # original -> (tools, sent)

    def constrained(
        self, original: list[Message], rewritten: list[Message], tools: list[dict[str, Any]]
    ) -> list[Message]:
        key = _system_text(original)
        if key is None or not rewritten or rewritten[0].get("role") != "system":
            return rewritten
        names = frozenset(str(t.get("name", "")) for t in tools)
        known = self._sent.get(key)
        if known is None or not names <= known[0]:
            self._sent[key] = (names, str(rewritten[0].get("content") or ""))
            return rewritten
        return [{"role": "system", "content": known[1]}, *rewritten[1:]]

    def plain(
        self, messages: list[Message], original: list[Message] | None = None
    ) -> list[Message]:
        """`messages` with the system message constrained mode sent for the same text, if any
        (`original`: the messages before a rewrite, whose system text is the key)."""
        key = _system_text(original if original is not None else messages)
        known = self._sent.get(key) if key is not None else None
        if known is None or not messages or messages[0].get("role") != "system":
            return messages
        return [{"role": "system", "content": known[1]}, *messages[1:]]


def _system_text(messages: list[Message]) -> str | None:
    if messages and messages[0].get("role") == "system":
        return str(messages[0].get("content") or "")
    return None
