"""Stop thinking: the person ends the model's reasoning now, from a key or the palette.

The failure it answers: a local model reasoning for minutes about a one-line fix, and the only
way out was interrupting the turn (its work lost) or waiting. Two ways, the first when it can:
- THROUGH THE SERVER: llama-server's reasoning control (provider/reasoning_control.py: the
  request armed with `reasoning_control: true`, then `POST /v1/chat/completions/control` with
  the streamed completion id and `reasoning_end`). The server closes the reasoning block and the
  SAME stream goes on to the answer: nothing is read again, the reasoning so far is kept.
- ELSE (no control route, the server refused it: a template without thinking tags is never
  armed): end the stream where the reasoning is, and ask the same request again with thinking
  off (`chat_template_kwargs.enable_thinking: false`, what Qwen3-style templates read; a
  template that does not read it reasons again, and a second press ends that too).
A notice with source `thinking` says which way it went, and why not the first; the reasoning
panel shows it.

The request is thread-safe (the app's thread sets it, the engine's stream takes it) and counts
only while reasoning streams: pressed between calls, or once the answer has started, it ends
nothing and is forgotten at the next call.
"""

from __future__ import annotations

import threading
from typing import Any

from ..provider.types import Provider

#: What the retried request carries (merged over the call's own extra fields).
THINKING_OFF: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": False}}
#: The notice's source: clients show it on the reasoning panel.
SOURCE = "thinking"
ASKED_AGAIN = "thinking stopped: the stream was ended and the model asked again with thinking off"
ENDED_BY_SERVER = (
    "thinking stopped by the server (reasoning_control): the model goes on to its answer"
)


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
    """Raised from the stream's delta callback: the provider closes the stream on the way out.
    Its text is the notice (why the server could not end it, when it was asked)."""

    def __init__(self, notice: str = ASKED_AGAIN) -> None:
        super().__init__(notice)
        self.notice = notice


def end_reasoning(provider: Provider) -> str:
    """Called in the stream's delta callback once the person asked: the server ends the
    reasoning (returns the notice; the stream goes on), else ThinkingStopped is raised."""
    ended = provider.end_reasoning()
    if ended.ok:
        return ENDED_BY_SERVER
    why = f" ({ended.detail})" if ended.detail else ""
    raise ThinkingStopped(ASKED_AGAIN.replace("thinking stopped", f"thinking stopped{why}", 1))


def thinking_off(extra: dict[str, Any] | None) -> dict[str, Any]:
    merged = dict(extra or {})
    kwargs = {**(merged.get("chat_template_kwargs") or {}), "enable_thinking": False}
    merged["chat_template_kwargs"] = kwargs
    return merged
