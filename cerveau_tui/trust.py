"""The person's trust in a workspace config, kept outside every workspace (direnv's `allow`).

A `.cerveau/config.toml` that lowers protection is applied only once the person has trusted that
exact file: the yes is keyed by the file's sha256, so any later edit (by the model, or by whoever
wrote the repository) needs a new yes. The store sits beside the person's own config, which the
sandbox masks and the file tools refuse.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from .state_file import read_regular


def store_beside(user_config: Path) -> Path:
    return user_config.parent / "trusted-workspaces.json"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


#: The store holds one line per trusted workspace; a bigger one is not ours.
STORE_MAX_BYTES = 4_000_000


def _load(store: Path) -> dict[str, object]:
    """What the person trusted; nothing when the store is absent, unreadable, or not a regular
    file (opened without blocking: a FIFO planted here hung start-up), which trusts nothing."""
    try:
        data = json.loads(read_regular(store, STORE_MAX_BYTES))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_trusted(workspace: Path, file_digest: str, store: Path) -> bool:
    entry = _load(store).get(str(workspace))
    return isinstance(entry, dict) and entry.get("digest") == file_digest


def record(workspace: Path, file_digest: str, store: Path) -> Path:
    """Remember the yes for `workspace` (a realpath): one digest per workspace, the latest."""
    data = _load(store)
    data[str(workspace)] = {
        "digest": file_digest,
        "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    store.parent.mkdir(parents=True, exist_ok=True)
    tmp = store.with_name(f".{store.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, store)
    return store
