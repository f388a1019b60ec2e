"""llama-server's slot endpoints for the scripted server: `GET /slots` and `POST /slots/{id}?action=
save|restore|erase` with a save folder, as `--slot-save-path DIR` gives them.

The slot's "KV cache" is the scripted prompt cache (ScriptState's token list), written to the
folder as JSON. `hollow=True` plays llama.cpp#26676: a restore that reports success and restores
nothing, which only the next request's `cache_n` reveals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from . import wire

if TYPE_CHECKING:
    from .script_state import ScriptState


class ScriptedSlots:
    def __init__(self, save_dir: Path | None, *, hollow: bool = False, slots: int = 1) -> None:
        """`save_dir` None: the slots are listed, and every action is refused as a server
        started without `--slot-save-path` refuses it. `slots`: how many (`--parallel N`), each
        with its own cache; a request names one with `id_slot`."""
        self.save_dir = save_dir
        self.hollow = hollow
        self.slots = slots
        self.actions: list[tuple[str, str]] = []  # (action, filename), in order
        self.acted_on: list[int] = []  # the slot of each action, in the same order

    def listing(self, state: ScriptState) -> list[dict[str, Any]]:
        return [
            {"id": i, "n_ctx": state.n_ctx // self.slots, "is_processing": False}
            for i in range(self.slots)
        ]

    def action(self, path: str, body: dict[str, Any], state: ScriptState) -> tuple[int, Any]:
        parts = urlsplit(path)
        slot = parts.path.rsplit("/", 1)[-1]
        action = (parse_qs(parts.query).get("action") or [""])[0]
        if not slot.isdigit() or int(slot) >= self.slots:
            return 400, wire.error_body(400, "Invalid slot ID")
        sid = int(slot)
        if self.save_dir is None:
            return 501, wire.error_body(
                501, "This server does not support slots action.", "not_supported_error"
            )
        if action == "erase":
            state.load_cache([], sid)
            return 200, {"id_slot": sid, "n_erased": 0}
        filename = str(body.get("filename") or "")
        self.actions.append((action, filename))
        self.acted_on.append(sid)
        if not filename or "/" in filename or filename.startswith("."):
            return 400, wire.error_body(400, "Invalid filename")
        file = self.save_dir / filename
        if action == "save":
            tokens = state.cached(sid)
            file.write_text(json.dumps(tokens))
            return 200, {"id_slot": sid, "filename": filename, "n_saved": len(tokens)}
        if action == "restore":
            try:
                tokens = json.loads(file.read_text())
            except (OSError, ValueError):
                return 400, wire.error_body(400, "Unable to restore slot, invalid slot save file")
            if not self.hollow:
                state.load_cache(tokens, sid)
            return 200, {"id_slot": sid, "filename": filename, "n_restored": len(tokens)}
        return 400, wire.error_body(400, "Invalid action")
