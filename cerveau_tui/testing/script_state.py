"""What a scripted server remembers across requests: the script cursor, the requests received,
and the one prompt-cache slot, with the approximate tokenizer and prompt rendering that make
cache_n behave like llama-server's. Apart from the HTTP handling (scripted_server.py) because
this is the part a scenario's assertions read.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

from .script import load_entries

APPROX_BYTES_PER_TOKEN = 4


def approx_tokens(text: str) -> list[int]:
    """Deterministic stand-in for a tokenizer: one id per 4 bytes of UTF-8."""
    data = text.encode("utf-8")
    return [
        int.from_bytes(data[i : i + 4], "little") % 49152
        for i in range(0, len(data), APPROX_BYTES_PER_TOKEN)
    ]


def render_prompt(body: dict[str, Any]) -> str:
    """A ChatML rendering of the request, close enough to what a template produces that prefix
    reuse (cache_n) behaves like the real server's."""
    parts = []
    if body.get("tools"):
        parts.append(
            "<|im_start|>tools\n" + json.dumps(body["tools"], sort_keys=True) + "<|im_end|>\n"
        )
    for m in body.get("messages") or []:
        content = m.get("content")
        if not isinstance(content, str):
            content = json.dumps(content)
        calls = json.dumps(m["tool_calls"]) if m.get("tool_calls") else ""
        parts.append(f"<|im_start|>{m.get('role')}\n{content}{calls}<|im_end|>\n")
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


class ScriptState:
    """What the handlers share: the script cursor, the received requests, the one cache slot."""

    def __init__(
        self,
        script: dict[str, Any] | list[Any],
        *,
        n_ctx: int = 4096,
        supports_tools: bool = True,
        extras: bool = True,
        piece: int = 8,
        log_path: str | None = None,
    ) -> None:
        self.entries = load_entries(script)
        self.n_ctx = n_ctx
        self.supports_tools = supports_tools
        self.extras = extras
        self.piece = piece
        self.log_path = log_path
        self.props: dict[str, Any] = {}  # merged over /props (ScriptedServer's `props`)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # each chat request's, lower-cased, in order
        self.models: dict[str, Any] = {}  # merged into /v1/models' model (ScriptedServer's)
        self.hits: Counter[str] = Counter()  # path -> requests received (extras included)
        self.hung_up = 0  # clients that hung up while a `silent_s` entry said nothing yet
        self.stopping = threading.Event()  # ends the endless hostile streams when the server stops
        self._cursor = 0
        self._cached: dict[int, list[int]] = {}  # slot id -> its cached prompt
        self.slots: Any = None  # testing/slots.py's ScriptedSlots: the slot endpoints answer
        self.keeps: int | None = None  # the prompt tokens kept, cut from the left (ScriptedServer)
        self.ollama: dict[str, Any] | None = None  # answers Ollama's routes (ollama_stub.py)
        self.drops_reasoning = False  # /apply-template drops reasoning before the last user turn
        self._ids = 0
        self._lock = threading.Lock()

    def record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(body) + "\n")

    def count_hang_up(self) -> None:
        with self._lock:
            self.hung_up += 1

    def next_entry(self) -> dict[str, Any] | None:
        with self._lock:
            if self._cursor >= len(self.entries):
                return None
            self._cursor += 1
            return self.entries[self._cursor - 1]

    def forget_cache(self) -> None:
        """What a restarted llama-server has: empty slots."""
        with self._lock:
            self._cached = {}

    def cached(self, slot: int = 0) -> list[int]:
        with self._lock:
            return list(self._cached.get(slot, []))

    def load_cache(self, tokens: list[int], slot: int = 0) -> None:
        with self._lock:
            self._cached[slot] = list(tokens)

    def prompt_cache(self, tokens: list[int], slot: int = 0) -> tuple[int, int]:
        """(cache_n, prompt_n) against the previous prompt in `slot` (a request's `id_slot`;
        slot 0 when it names none): the longest common prefix is reused, and at least one token
        is always evaluated, as llama-server does."""
        with self._lock:
            common = 0
            for a, b in zip(tokens, self._cached.get(slot, []), strict=False):
                if a != b:
                    break
                common += 1
            common = min(common, max(0, len(tokens) - 1))
            self._cached[slot] = tokens
            return common, len(tokens) - common

    def new_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"chatcmpl-scripted{self._ids:06d}"
