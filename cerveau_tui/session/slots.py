"""Saved server slots: what was saved for which session, under which name, and when it goes.

Measured (issue 23): a 100-round session resumed after a server restart evaluated 3,599 of its
3,599 prompt tokens; on a CPU a 20k-token history is minutes of prefill before the first new token.
llama-server can write a slot's KV cache to a file (`--slot-save-path DIR`, `POST /slots/{id}?
action=save`) and read it back (`action=restore`). This module is the bookkeeping: the client for
those endpoints, the name a save gets, and one record per session in the harness's cache dir.

- The name says what the file holds: the session, the model (a hash of the server's model path,
  the file's size when it is local, and the server build: a KV cache from another model or build
  is garbage to this one), and a hash of the exact prompt prefix saved (the request's messages).
  A restore is attempted only when the record's model and prefix match the request about to go.
- One record per session; a newer save replaces it. The managed server saves into the cache dir
  (`StackPaths.slots_dir`), so a superseded file there is deleted; a remote server's folder is its
  own (llama-server has no endpoint to delete a file).
- Collected with the sessions: a record whose session log is gone goes with its file; beyond
  KEPT_SESSIONS the oldest go; a file in the folder that no record names (a crash between save
  and record) goes once it is ORPHAN_AGE_S old.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from ..plan.persist import sessions_dir
from ..stack.keys import headers_for as server_headers
from ..state_home import alternate_for

#: Saved slots kept, newest first: a 7B model's KV cache for a 20k-token history is about a GB.
KEPT_SESSIONS = 20
#: A file no record names is collected after this long (a save being written is younger).
ORPHAN_AGE_S = 600.0
#: A save writes the whole KV cache; a large one on a slow disk takes a while.
SAVE_TIMEOUT_S = 120.0


class SlotRecord(BaseModel):
    session_id: str
    filename: str
    model_key: str
    prefix_hash: str
    prefix_messages: int  # how many of the request's messages the saved prefix holds
    n_saved: int = 0  # tokens, as the server said
    local: bool = False  # the file is in this harness's slot folder (the managed server's)
    workspace: str = ""
    saved_at: float = 0.0


def prefix_hash(messages: list[dict[str, Any]]) -> str:
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def model_key(model_path: str | None, build_info: str | None) -> str:
    size = ""
    if model_path and os.path.isfile(model_path):
        size = str(os.path.getsize(model_path))
    raw = f"{model_path or '?'}|{size}|{build_info or '?'}"
    return hashlib.sha256(raw.encode()).hexdigest()[:12]


def slot_filename(session_id: str, key: str, prefix: str) -> str:
    return f"{session_id}-{key}-{prefix}.bin"


class SlotStore:
    """The records (`records_dir/<session>.json`) and the managed server's folder."""

    def __init__(self, records_dir: Path, slots_dir: Path) -> None:
        self.records_dir, self.slots_dir = records_dir, slots_dir

    def load(self, session_id: str) -> SlotRecord | None:
        try:
            return SlotRecord.model_validate_json(
                (self.records_dir / f"{session_id}.json").read_text()
            )
        except (OSError, ValidationError, ValueError):
            return None

    def put(self, rec: SlotRecord) -> None:
        old = self.load(rec.session_id)
        self.records_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.records_dir / f".{rec.session_id}.json.tmp"
        tmp.write_text(rec.model_dump_json())
        os.replace(tmp, self.records_dir / f"{rec.session_id}.json")
        if old is not None and old.local and old.filename != rec.filename:
            (self.slots_dir / old.filename).unlink(missing_ok=True)

    def is_local(self, filename: str) -> bool:
        return (self.slots_dir / filename).is_file()

    def drop(self, rec: SlotRecord) -> None:
        (self.records_dir / f"{rec.session_id}.json").unlink(missing_ok=True)
        if rec.local:
            (self.slots_dir / rec.filename).unlink(missing_ok=True)

    def records(self) -> list[SlotRecord]:
        out = []
        for p in sorted(self.records_dir.glob("*.json")) if self.records_dir.is_dir() else []:
            rec = self.load(p.stem)
            if rec is not None:
                out.append(rec)
        return sorted(out, key=lambda r: r.saved_at, reverse=True)

    def collect(self, *, now: float | None = None) -> list[str]:
        """Garbage-collect with the sessions (the rules above); returns the files removed."""
        now = time.time() if now is None else now
        removed: list[str] = []
        kept: set[str] = set()
        for i, rec in enumerate(self.records()):
            name = f"{rec.session_id}.jsonl"
            # Its log in the workspace, or in its alternate (a read-only workspace: state_home).
            logs = [sessions_dir(Path(rec.workspace)), alternate_for(rec.workspace) / "sessions"]
            found = bool(rec.workspace) and any((d / name).is_file() for d in logs)
            if i >= KEPT_SESSIONS or not found:
                self.drop(rec)
                removed.append(rec.filename)
            else:
                kept.add(rec.filename)
        for f in self.slots_dir.glob("*.bin") if self.slots_dir.is_dir() else []:
            try:
                old = now - f.stat().st_mtime > ORPHAN_AGE_S
            except OSError:
                continue
            if f.name not in kept and old:
                f.unlink(missing_ok=True)
                removed.append(f.name)
        return removed


class SlotRefused(Exception):
    """The server refused a slot action; `unsupported` when it has no slot save folder."""

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


class SlotClient:
    """llama-server's slot endpoints. `slot()` is None for a server without them, or with more
    than one slot (a session claims one of `slot_ids()` then: slot_claim.py)."""

    def __init__(self, base_url: str) -> None:
        base = base_url.rstrip("/")
        self.base = base[: -len("/v1")] if base.endswith("/v1") else base
        host = httpx.URL(self.base).host
        local = host in ("127.0.0.1", "localhost", "::1")
        # The key of a server this harness started (stack/keys.py).
        self._client = httpx.Client(
            trust_env=not local, timeout=SAVE_TIMEOUT_S, headers=server_headers(self.base)
        )

    def slot(self) -> int | None:
        ids = self.slot_ids()
        return ids[0] if ids is not None and len(ids) == 1 else None

    def slot_ids(self) -> list[int] | None:
        """The server's slot ids (`GET /slots`); None for a server without the endpoint."""
        try:
            r = self._client.get(self.base + "/slots", timeout=5.0)
            slots = r.json() if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        if not isinstance(slots, list) or not slots:
            return None
        ids = [s.get("id", 0) if isinstance(s, dict) else None for s in slots]
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            return None
        return [int(i) for i in ids if i is not None]

    def act(self, slot: int, action: str, filename: str) -> dict[str, Any]:
        try:
            r = self._client.post(
                f"{self.base}/slots/{slot}", params={"action": action}, json={"filename": filename}
            )
        except httpx.HTTPError as exc:
            raise SlotRefused(f"{action}: {type(exc).__name__}: {exc}") from exc
        try:
            body = r.json()
        except ValueError:
            body = {}
        if r.status_code != 200 or not isinstance(body, dict):
            err = body.get("error") if isinstance(body, dict) else None
            msg = err.get("message") if isinstance(err, dict) else r.text[:200]
            raise SlotRefused(
                f"{action}: HTTP {r.status_code}: {msg}", unsupported=r.status_code in (404, 501)
            )
        return body

    def close(self) -> None:
        self._client.close()
