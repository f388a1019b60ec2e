"""Stop thinking: the person ends the model's reasoning now, from a key or the palette.

The failure it answers: a local model reasoning for minutes about a one-line fix, and the only
way out was interrupting the turn (its work lost) or waiting. Ending the reasoning mid-stream
needs the server's help (llama-server's `reasoning_control` and its control endpoint, which wants
the completion's id); without it the honest way is the one implemented here: end the stream where
the reasoning is, and ask the same request again with thinking off
(`chat_template_kwargs.enable_thinking: false`, what Qwen3-style templates read; a template that
does not read it reasons again, and a second press ends that too). A notice with source
`thinking` says which way it went; the reasoning panel shows it.

The request is thread-safe (the app's thread sets it, the engine's stream takes it) and counts
only while reasoning streams: pressed between calls, or once the answer has started, it ends
nothing and is forgotten at the next call.
"""

from __future__ import annotations

import threading
from typing import Any

#: What the retried request carries (merged over the call's own extra fields).
THINKING_OFF: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": False}}
#: The notice's source: clients show it on the reasoning panel.
SOURCE = "thinking"
ASKED_AGAIN = "thinking stopped: the stream was ended and the model asked again with thinking off"


class ThinkingStop:
    def __init__(self) -> None:
        self._asked = threading.Event()

    def request(self) -> None:
        """Thread-safe: end the reasoning that is streaming now."""
        self._asked.set()

    def forget(self) -> None:
        self._asked.clear()

    def take(self) -> bool:
        """True once per request: the stream calling this ends its reasoning."""
        if not self._asked.is_set():
            return False
        self._asked.clear()
        return True


class ThinkingStopped(Exception):
    """Raised from the stream's delta callback: the provider closes the stream on the way out."""


def thinking_off(extra: dict[str, Any] | None) -> dict[str, Any]:
    merged = dict(extra or {})
    kwargs = {**(merged.get("chat_template_kwargs") or {}), "enable_thinking": False}
    merged["chat_template_kwargs"] = kwargs
    return merged
