"""Ending the model's reasoning mid-stream through the server: llama-server's reasoning control.

What llama-server offers (tools/server/README.md and server-context.cpp of the llama.cpp this
project builds, vendored by llama-cpp-python 0.3.36, commit 0c1e570):
- a completion requested with `"reasoning_control": true` is ARMED: its sampler can be told to
  close the reasoning block (the server only arms it when the chat template has thinking tags);
- `POST /v1/chat/completions/control` with `{"id": <the completion's id, as streamed>,
  "action": "reasoning_end"}` (plus `"model"` for a router) forces the end of the current
  reasoning, and the model moves on to its answer in the same stream. It answers
  `{"success": true}`, or `{"success": false, "message": ...}` ("no active completion for this
  id", "reasoning control not enabled for this completion"); a missing id or an unknown action
  is a 400.

`/props` does NOT advertise it (no field names the control endpoint or `reasoning_control` in
that build's `/props`), so it is detected by asking the route itself, once, with no id: a server
that has it answers 400 "missing completion id", one that does not answers 404. Only asked of a
server whose `/props` looks like llama-server's (it has `build_info`): vLLM and other OpenAI
servers are not probed. No field is invented: the request carries `reasoning_control` only when
the route answered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .types import ReasoningEnd, ServerProps

CONTROL_PATH = "/v1/chat/completions/control"
REASONING_END = "reasoning_end"

#: (method, path, JSON body) -> (status, parsed JSON or None), None without an answer
#: (extras.py ServerExtras._ask: byte-capped and within a deadline).
Ask = Callable[[str, str, Any], "tuple[int, Any] | None"]


class ReasoningControl:
    def __init__(self, ask: Ask, props: Callable[[], ServerProps]) -> None:
        self._ask = ask
        self._props = props
        self._offered: bool | None = None

    def offered(self) -> bool:
        """The server has the control route (asked once, then remembered)."""
        if self._offered is None:
            self._offered = self._probe()
        return self._offered

    def _probe(self) -> bool:
        if not self._props().build_info:
            return False  # not llama-server's /props: nothing to ask
        answer = self._ask("POST", CONTROL_PATH, {"action": REASONING_END})
        if answer is None:
            return False
        status, body = answer
        # 400 "missing completion id" is the route answering; 404 (or 405) is no route.
        return status in (200, 400) and isinstance(body, dict)

    def arm(self, body: dict[str, Any]) -> None:
        """Ask for a completion that can be ended early, when the server can end one."""
        if self.offered():
            body["reasoning_control"] = True

    def end(self, completion_id: str, model: str = "") -> ReasoningEnd:
        if not self.offered():
            return ReasoningEnd(False, "the server has no reasoning control")
        if not completion_id:
            return ReasoningEnd(False, "the stream has not said its completion id yet")
        request: dict[str, Any] = {"id": completion_id, "action": REASONING_END}
        if model:
            request["model"] = model  # a router needs it to find the instance
        answer = self._ask("POST", CONTROL_PATH, request)
        if answer is None:
            return ReasoningEnd(False, "the server did not answer the control request")
        status, reply = answer
        if status == 200 and isinstance(reply, dict) and reply.get("success") is True:
            return ReasoningEnd(True)
        message = reply.get("message") if isinstance(reply, dict) else None
        if not isinstance(message, str) and isinstance(reply, dict):
            error = reply.get("error")
            message = error.get("message") if isinstance(error, dict) else None
        said = message if isinstance(message, str) and message else f"HTTP {status}"
        return ReasoningEnd(False, f"the server refused: {said[:200]}")


class LiveCompletion:
    """The id of the completion being streamed now (the chunks' `id`), for `end`: kept by the
    thread reading the stream, read from its delta callback (the same thread)."""

    def __init__(self) -> None:
        self.id = ""

    def seen(self, chunk: Any) -> None:
        if isinstance(chunk, dict):
            cid = chunk.get("id")
            if isinstance(cid, str) and cid and len(cid) <= 200:
                self.id = cid

    def clear(self) -> None:
        self.id = ""
