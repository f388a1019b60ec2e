"""Repeats that learn nothing: the same call, again, after it returned the same result.

Identity of the call alone (`is_repeat`, below) trips on legitimate polling: `python3 poll.py` run
five times while a build progresses is the same call every time, but each answer is new
information. What wastes a run is the same call AFTER the same answer (the field reports "burned
30K tokens retrying the exact same broken call", and 10,943 identical `apply_patch` calls), so the
results take part in the identity. Outputs are compared exactly: normalising numbers away would
make "3/10 done" and "5/10 done" the same, which is exactly the progress a poll is watching; a
failure whose text varies (a timestamp) is the breaker's to catch, by shape.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any


def canonical(name: str, arguments: dict[str, Any]) -> str:
    """Key order and whitespace do not make a call different; anything else does."""
    return (
        name
        + "\x00"
        + json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    )


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


# The bash tool's trailers say how the command ended, not what it said.
_TRAILER = re.compile(r"\n?\[(?:exit code [^\]]*|processes left running[^\]]*)\]\s*$")


def result_digest(output: str) -> str:
    text = output or ""
    prev = None
    while prev != text:
        prev = text
        text = _TRAILER.sub("", text).rstrip()
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()


def is_repeat_with_results(
    done: Sequence[tuple[str, dict[str, Any], str]], pending: tuple[str, dict[str, Any]], n: int
) -> bool:
    """Whether running `pending` now would be the n-th identical call in a row whose n-1 earlier
    runs all returned the same output. `done` is the executed calls of the turn, in order, as
    (name, arguments, output)."""
    if n < 2 or len(done) < n - 1:
        return False
    tail = done[-(n - 1) :]
    if not is_repeat([*((name, args) for name, args, _ in tail), pending], n):
        return False
    digests = {result_digest(out) for _, _, out in tail}
    return len(digests) == 1
