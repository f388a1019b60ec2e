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
import secrets
from pathlib import Path
from typing import Any

from ..config import user_config_path

KEY_NAME = "session-grants.key"
SEALED_FIELDS = ("scope_key", "scope", "extra_writable", "network")


def key_path() -> Path:
    return user_config_path().parent / KEY_NAME


#: A key shorter than this is not used: an empty key file (a write that failed, a crash before
#: it) would otherwise seal every grant with the empty key, which anyone can forge.
KEY_BYTES = 32


def load_key(create: bool = True) -> bytes | None:
    """The person's key (made once, 0600); None when it cannot be read or made, or is too short."""
    path = key_path()
    try:
        key = bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        return _make(path) if create else None
    except (OSError, ValueError):
        return None
    return key if len(key) >= KEY_BYTES else None


def _make(path: Path) -> bytes | None:
    """Written whole to a temporary name, then linked into place: no process ever reads a
    half-written key, and a key another process made first is never replaced."""
    key = secrets.token_bytes(KEY_BYTES)
    tmp = path.with_name(f".{KEY_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(key.hex())
                f.flush()
                os.fsync(f.fileno())
            os.link(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    except FileExistsError:  # another process made it first: use theirs
        return load_key(create=False)
    except OSError:
        return None
    return key


def _message(record: dict[str, Any], session_id: str, workspace: Path) -> bytes:
    body = {k: record.get(k) for k in SEALED_FIELDS}
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
