"""The person's key, and the records it vouches for: what this harness wrote for this person.

A workspace can arrive from anyone, and what the harness keeps there (its session logs and the
grants they hold) can be planted by a cloned repository: a log committed as
`.cerveau/sessions/x.jsonl` was resumed by `cerveau --continue` as "the most recent session", its
conversation read back to the model as if the person had had it (prompt injection by history).
So what the harness writes there carries an HMAC (sha256) under a key kept beside the person's
config, outside every workspace (the sandbox masks that folder and the file tools refuse it): a
record forged elsewhere, or copied from another session or workspace, does not verify.

Used by session/grant_seal.py (each grant) and plan/persist.py (each log's header); a foundation
module because the log is written below the session layer.

No key (an unwritable config dir): nothing verifies, which is the safe side.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from .config import user_config_path

KEY_NAME = "session-grants.key"  # its first use named it; renaming would orphan every grant

#: A key shorter than this is not used: an empty key file (a write that failed, a crash before
#: it) would otherwise seal every record with the empty key, which anyone can forge.
KEY_BYTES = 32


def key_path() -> Path:
    return user_config_path().parent / KEY_NAME


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


def mac(key: bytes | None, body: dict[str, Any]) -> str:
    """The HMAC of a JSON object (canonical form); "" without a key."""
    if key is None:
        return ""
    message = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def verifies(key: bytes | None, body: dict[str, Any], sealed: object) -> bool:
    if key is None or not isinstance(sealed, str) or not sealed:
        return False
    return hmac.compare_digest(mac(key, body), sealed)


# -- a session log's header ---------------------------------------------------------------------
#
# The header binds the log's session id and the workspace's realpath (and when it started): it
# is written once, so the log can be appended to all session long without sealing each line. A
# header copied from the person's own log into another file name or workspace does not verify.


def _header_body(session_id: str, workspace: Path, started: object) -> dict[str, Any]:
    return {
        "purpose": "session-log",
        "session_id": session_id,
        "workspace": os.path.realpath(workspace),
        "started": started,
    }


def seal_log_header(key: bytes | None, session_id: str, workspace: Path, started: str) -> str:
    return mac(key, _header_body(session_id, workspace, started))


def log_header_verifies(
    key: bytes | None, header: dict[str, Any] | None, session_id: str, workspace: Path
) -> bool:
    """True when `header` (a log's first record) is one this person's harness wrote for this
    session id in this workspace."""
    if not header or header.get("kind") != "session" or header.get("id") != session_id:
        return False
    body = _header_body(session_id, workspace, header.get("started"))
    return verifies(key, body, header.get("seal"))


# -- each line of a session log -----------------------------------------------------------------
#
# The header says who made the log; each line says it was written by the harness for it: a line
# appended later (a command under a backend that leaves `.cerveau/` writable, a hand edit) has no
# valid MAC and is not read back, so nothing but what this harness wrote reaches the model on a
# resume. Per line, not per write, so a log a crash tore keeps every whole line before the tear.

#: `{"sig":"<64 hex>",` before the line's own JSON object (whose `{` it replaces).
_MAC_PREFIX = '{"sig":"'
_SEALED_AT = len(_MAC_PREFIX) + 64


def _line_mac(key: bytes, session_id: str, workspace: str, raw: bytes) -> str:
    domain = f"session-line\0{session_id}\0{workspace}\0".encode()
    return hmac.new(key, domain + raw, hashlib.sha256).hexdigest()


def seal_line(key: bytes | None, session_id: str, workspace: str, raw: bytes) -> bytes:
    """`raw` (one JSON object, no newline) with its MAC as the first field; as is without a key
    (the log is then foreign: its header is not sealed either)."""
    if key is None or not raw.startswith(b"{") or raw == b"{}":
        return raw
    mac = _line_mac(key, session_id, workspace, raw)
    return f'{_MAC_PREFIX}{mac}",'.encode() + raw[1:]


def line_verifies(key: bytes | None, session_id: str, workspace: str, line: str) -> bool:
    """True when `line` (as read, newline stripped or not) carries a valid MAC for this log."""
    line = line.rstrip("\n")
    if key is None or not line.startswith(_MAC_PREFIX) or line[_SEALED_AT : _SEALED_AT + 2] != '",':
        return False
    raw = ("{" + line[_SEALED_AT + 2 :]).encode("utf-8", "surrogateescape")
    mac = _line_mac(key, session_id, workspace, raw)
    return hmac.compare_digest(mac, line[len(_MAC_PREFIX) : _SEALED_AT])
