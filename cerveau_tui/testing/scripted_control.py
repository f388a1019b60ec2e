"""llama-server's reasoning control, for the scripted server (scripted_server.py), when a test
asks for it: `ScriptedServer(..., control=ScriptedControl())`. Without it the scripted server has
no control route (404), as a llama-server built before the feature, or any other server.

What it copies (llama.cpp tools/server: README.md "POST /v1/chat/completions/control" and
server-context.cpp SERVER_TASK_TYPE_CONTROL, the build this project provisions):
- a chat request with `"reasoning_control": true` is armed (`arms=False`: the server never arms
  one, as llama-server with a template that has no thinking tags);
- `POST /v1/chat/completions/control` `{"id", "action"}`: no id, or an action other than
  `reasoning_end`, is a 400 error body; an id no stream is live for answers `{"success": false,
  "message": "no active completion for this id"}`; a completion that was not armed, `{"success":
  false, "message": "reasoning control not enabled for this completion"}`; else `{"success":
  true}` and the stream skips the rest of its reasoning and goes on to the answer.

A real model reasons token by token; the scripted one writes its reply at once. So, with control
on, a stream waits after each reasoning fragment (until its first control request, up to
`hold_s` each) for one: the request a test's delta callback sends lands before the next
fragment, every time, however loaded the machine (nothing here is timed, only bounded).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from . import wire

CONTROL_PATH = "/v1/chat/completions/control"


class ScriptedControl:
    def __init__(self, *, hold_s: float = 5.0, arms: bool = True) -> None:
        self.hold_s = hold_s
        self.arms = arms
        self.requests: list[dict[str, Any]] = []  # control request bodies, in order
        self._lock = threading.Lock()
        # id -> (armed, asked): `asked` is set by a control request, which ends an armed
        # stream's reasoning; for one not armed it only lets the stream go on.
        self._live: dict[str, tuple[bool, threading.Event]] = {}

    # --- the chat side ------------------------------------------------------------------------
    def started(self, cid: str, body: dict[str, Any]) -> None:
        armed = self.arms and body.get("reasoning_control") is True
        with self._lock:
            self._live[cid] = (armed, threading.Event())

    def finished(self, cid: str) -> None:
        with self._lock:
            self._live.pop(cid, None)

    def skips(self, cid: str, event: bytes) -> bool:
        """True for a reasoning fragment after the reasoning was ended: not sent."""
        armed, asked = self._live.get(cid, (False, None))
        return armed and asked is not None and asked.is_set() and _is_reasoning(event)

    def sent(self, cid: str, event: bytes, stopping: threading.Event) -> None:
        """After a reasoning fragment: wait for a control request, a bounded while."""
        live = self._live.get(cid)
        if live is None or live[1].is_set() or not _is_reasoning(event):
            return
        waited, asked = 0.0, live[1]
        while waited < self.hold_s and not asked.is_set() and not stopping.is_set():
            asked.wait(0.05)
            waited += 0.05

    # --- the control route ----------------------------------------------------------------------
    def handle(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(dict(body))
        cid, action = body.get("id"), body.get("action")
        if not isinstance(cid, str) or not cid:
            return 400, wire.error_body(400, "missing completion id", "invalid_request_error")
        if action != "reasoning_end":
            return 400, wire.error_body(400, "unknown control action", "invalid_request_error")
        with self._lock:
            if cid not in self._live:
                return 200, {"success": False, "message": "no active completion for this id"}
            armed, asked = self._live[cid]
        asked.set()
        if not armed:
            return 200, {
                "success": False,
                "message": "reasoning control not enabled for this completion",
            }
        return 200, {"success": True}


def _is_reasoning(event: bytes) -> bool:
    if not event.startswith(b"data: "):
        return False
    try:
        chunk = json.loads(event[len(b"data: ") :])
    except ValueError:
        return False
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    delta = choices[0].get("delta")
    return isinstance(delta, dict) and bool(delta.get("reasoning_content"))
