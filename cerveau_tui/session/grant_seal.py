"""Sealing the session grants a log carries, so only the person's own grants come back on resume.

A grant widens the boundary (a command prefix that runs without asking, with extra writable
paths or the network). The log sits in the workspace, and a workspace can arrive from anyone: a
repository that commits `.cerveau/sessions/x.jsonl` with a grant of `command:rm` and `/` writable
would otherwise have it restored by the next `cerveau --continue` after a clone. So each grant
record carries an HMAC (sha256) under a key kept beside the person's config (which the sandbox
masks and the file tools refuse), over the grant, the session id and the workspace's realpath:
a record forged elsewhere, or copied from another session or workspace, does not verify and is
not restored (the resume says how many were dropped).

No key (an unwritable config dir): grants are still logged, unsealed, and not restored; the
session goes on asking, which is the safe side.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

# The key is the person's (person_key.py): the same one seals each session log's header.
from ..person_key import KEY_BYTES, KEY_NAME, key_path, load_key

__all__ = ["KEY_BYTES", "KEY_NAME", "key_path", "load_key", "seal", "verify"]

SEALED_FIELDS = ("scope_key", "scope", "extra_writable", "network")
# Sealed when present and not empty: a record written before it existed (no `hosts`: any host)
# still verifies, and one whose hosts were stripped by hand does not.
SEALED_WHEN_SET = ("hosts",)


def _message(record: dict[str, Any], session_id: str, workspace: Path) -> bytes:
    body = {k: record.get(k) for k in SEALED_FIELDS}
    body.update({k: record[k] for k in SEALED_WHEN_SET if record.get(k)})
    body["session_id"] = session_id
    body["workspace"] = os.path.realpath(workspace)
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")


def seal(key: bytes | None, record: dict[str, Any], session_id: str, workspace: Path) -> str:
    if key is None:
        return ""
    return hmac.new(key, _message(record, session_id, workspace), hashlib.sha256).hexdigest()


def verify(
    key: bytes | None, record: dict[str, Any], mac: str, session_id: str, workspace: Path
) -> bool:
    if key is None or not mac:
        return False
    return hmac.compare_digest(seal(key, record, session_id, workspace), mac)
