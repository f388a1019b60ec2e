"""The workspace as bytes: blake3 fingerprints, a content-addressed store, atomic writes."""

from __future__ import annotations

from .atomic import atomic_write
from .digest import hash_bytes, hash_path
from .fingerprint import Fingerprinter, Snapshot
from .store import BlobStore

__all__ = ["BlobStore", "Fingerprinter", "Snapshot", "atomic_write", "hash_bytes", "hash_path"]
