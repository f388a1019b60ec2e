"""One server slot per session on a server with several (`--parallel N`): claimed, then pinned.

On a multi-slot llama-server a request that names no slot goes where the server chooses (the
slot whose cached prompt looks most alike, else the least recently used one): two sessions on
one server took each other's slot, and each request re-read its whole conversation; the slot
keeper could not save or restore either, since it could not say which slot held what. So each
session claims one slot for its lifetime and sends `id_slot` with every request (its turn close
too), and its save and restore act on that slot.

A claim is a lock file per server and slot in this machine's slot folder (flock, released by
the kernel when the session's process ends, however it ends), so the sessions of one machine
never share a slot while one is free. Sessions on other machines are not seen: a server shared
across machines may still give two of them one slot; the cache ledger then names the cause
("another client used the slot"). When every slot is claimed, the session is not pinned and
the server chooses, as before.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path


class SlotClaim:
    """A slot held for this session until `release` (or the process's end)."""

    def __init__(self, slot: int, fd: int) -> None:
        self.slot = slot
        self._fd: int | None = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor drops the lock


def claim_slot(folder: Path, server: str, slots: Sequence[int]) -> SlotClaim | None:
    """The first of `slots` no other session of this machine holds on `server`; None when all
    are held or the folder cannot be written."""
    key = hashlib.blake2b(server.encode(), digest_size=8).hexdigest()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    for slot in slots:
        try:
            fd = os.open(folder / f"{key}-{slot}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return SlotClaim(slot, fd)
    return None
