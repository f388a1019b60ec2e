"""How the window is shared: the reply's cap, and the room one tool result may take.

Pure, so the arithmetic that decides what the model may say and read is tested without a server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..text_cut import cut_marker, line_breaks

#: The reply cap when the person set none: an eighth of the window, within these bounds. A fixed
#: 512 cut ordinary `write_file` and `commit_plan` calls on a 32k model; an eighth leaves the
#: prompt seven eighths, and the ceiling keeps a 128k window from reserving 16k for every reply.
REPLY_SHARE = 8
REPLY_MIN = 512
REPLY_MAX = 4096

#: Tokens kept free beside a result: the template's own tokens and the next message's framing.
RESULT_MARGIN = 128
#: However full the window, a result keeps this much: an empty result teaches the model nothing.
RESULT_FLOOR = 256


def reply_cap(n_ctx: int, explicit: int | None) -> int:
    """The per-request token cap: the person's value when they set one, else derived from n_ctx."""
    if explicit is not None:
        return explicit
    return max(REPLY_MIN, min(REPLY_MAX, n_ctx // REPLY_SHARE))


def result_room(n_ctx: int, used: int, reply: int) -> int:
    """Tokens one more result may take: what the window holds minus what is in it (the server's
    count) minus the reply's reservation. Never below a quarter of the prompt's share (packing
    then compacts older rounds to make that room) nor RESULT_FLOOR."""
    least = max(RESULT_FLOOR, (n_ctx - reply) // 4)
    return max(least, n_ctx - used - reply - RESULT_MARGIN)


def fit_result(text: str, room: int, count: Callable[[str], int]) -> str:
    """`text` when it fits `room` tokens; else its head and tail with the cut declared between
    them. Cutting the middle keeps what a command said first (what it ran) and last (the error,
    the exit code), which is where the model looks."""
    tokens = count(text)
    if tokens <= room:
        return text
    chars = len(text) * room // max(tokens, 1)
    for _ in range(4):  # the tokens-per-character ratio differs between the head and the whole
        head = chars * 2 // 3
        tail = chars - head
        cut = len(text) - head - tail
        lines = line_breaks(text, head, len(text) - tail)
        marker = (
            "\n"
            + cut_marker(
                lines,
                f"{cut:,} characters ({tokens:,} tokens in all) cut here: the window had room "
                f"for {room:,} tokens of this result",
            )
            + "\n"
        )
        shown = text[:head] + marker + (text[-tail:] if tail else "")
        if count(shown) <= room or chars <= 0:
            return shown
        chars = chars * 3 // 4
    return shown


def shrink_largest(
    messages: list[dict[str, Any]], share: float, count: Callable[[str], int]
) -> list[dict[str, Any]]:
    """The packed window with its largest message after the system prompt cut to `share` of its
    tokens (head and tail kept, the cut declared). A copy: the history itself is not touched."""
    sized = [
        (len(m["content"]), i)
        for i, m in enumerate(messages)
        if i > 0 and isinstance(m.get("content"), str)
    ]
    if not sized:
        return messages
    length, i = max(sized)
    text = messages[i]["content"]
    room = int(count(text) * share)
    if length < 200 or room < 1:
        return messages
    out = list(messages)
    out[i] = {**messages[i], "content": fit_result(text, room, count)}
    return out
