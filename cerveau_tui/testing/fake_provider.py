"""An in-process Provider for unit tests: no server, no socket, the whole Provider protocol.

The scripted server (scripted_server.py) is the way to test what goes over the wire; this is for
the tests that only need a model to answer: each `complete` returns the next scripted reply and
keeps the request it was asked (messages, tools) for the test to read.

    FakeProvider([FakeProvider.call("write_file", path="a.txt", content="x"), "done"])
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ..provider.types import Completion, Delta, ReasoningEnd, ServerProps, ToolCall, Usage

#: What it answers once the script is spent: a plain answer ends the turn, never a loop.
EXHAUSTED = "(the fake provider's script is exhausted)"


class FakeProvider:
    base_url = ""
    _ids = 0  # tool call ids, numbered across every fake in the process (unique, stable order)

    def __init__(
        self,
        replies: Iterable[Completion | str] = (),
        *,
        n_ctx: int = 8192,
        mode: str = "native",
        model_path: str = "fake-model.gguf",
    ) -> None:
        self._replies = [r if isinstance(r, Completion) else Completion(content=r) for r in replies]
        self._lock = threading.Lock()
        self._n = 0
        self.n_ctx, self.mode, self.model_path = n_ctx, mode, model_path
        self.requests: list[dict[str, Any]] = []  # {"messages", "tools", "max_tokens"} per call
        self.closed = False

    @classmethod
    def call(cls, name: str, **arguments: Any) -> Completion:
        """A reply that is one tool call."""
        FakeProvider._ids += 1
        return Completion(
            tool_calls=[ToolCall(f"fake-{FakeProvider._ids}", name, json.dumps(arguments))],
            finish_reason="tool_calls",
        )

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int,
        on_delta: Callable[[Delta], None] | None = None,
        cancel: threading.Event | None = None,
        extra: dict[str, Any] | None = None,
        narrow: list[dict[str, Any]] | None = None,
    ) -> Completion:
        reply = self._next(messages, tools, max_tokens)
        if on_delta is not None and reply.content:
            on_delta(Delta(content=reply.content, tokens=1))
        return reply

    def complete_json(
        self, messages: list[dict[str, Any]], schema: dict[str, Any], *, max_tokens: int
    ) -> str:
        return self._next(messages, [], max_tokens).content

    def _next(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> Completion:
        with self._lock:
            self.requests.append(
                {"messages": [dict(m) for m in messages], "tools": tools, "max_tokens": max_tokens}
            )
            i, self._n = self._n, self._n + 1
        reply = self._replies[i] if i < len(self._replies) else Completion(content=EXHAUSTED)
        # A fresh object each time: the loop annotates what it is handed (usage, content).
        prompt = sum(len(str(m.get("content") or "")) for m in messages) // 4
        return Completion(
            content=reply.content,
            reasoning=reply.reasoning,
            tool_calls=list(reply.tool_calls),
            finish_reason=reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"),
            usage=Usage(prompt, max(1, len(reply.content) // 4)),
            via=self.mode,
        )

    def end_reasoning(self) -> ReasoningEnd:
        return ReasoningEnd(False, "the fake provider has no reasoning control")

    def props(self) -> ServerProps:
        return ServerProps(n_ctx=self.n_ctx, model_path=self.model_path, supports_tools=True)

    def tokenize(self, text: str) -> list[int] | None:
        return None  # the counter degrades to its labelled estimate, as with a server that can't

    def health(self) -> bool:
        return not self.closed

    def resolved_mode(self) -> str:
        return self.mode

    def close(self) -> None:
        self.closed = True
