"""Repeat detection over the tool and its canonicalised arguments. Pure."""

from __future__ import annotations

import json
from typing import Any


def canonical(name: str, arguments: dict[str, Any]) -> str:
    """Key order and whitespace do not make a call different; anything else does."""
    return name + "\x00" + json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_repeat(calls: list[tuple[str, dict[str, Any]]], n: int) -> bool:
    """Whether the last n calls are identical.

    Identity is over the tool AND its canonicalised input, which is what lets the detector coexist
    with recovery: retrying with a different approach is not an identical call, so it never trips,
    while the same failing command three times does.
    """
    if n < 2 or len(calls) < n:
        return False
    tail = [canonical(name, args) for name, args in calls[-n:]]
    return all(t == tail[0] for t in tail)
