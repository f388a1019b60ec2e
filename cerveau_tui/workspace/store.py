"""A content-addressed blob store under `<workspace>/.cerveau/blobs/`, keyed by blake3.

Undo, plan checkpoints and the near-green rollback all need "the bytes this file had then".
Keying blobs by the same blake3 the fingerprint uses means a checkpoint's hash IS the key to its
content: no second index to drift out of step with the first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from .atomic import atomic_write
from .fingerprint import hash_bytes

_DIGEST = re.compile(r"^[0-9a-f]{64}$")


class BlobMissing(KeyError):
    pass


class BlobCorrupt(ValueError):
    pass


class OutsideWorkspace(ValueError):
    pass


class BlobStore:
    def __init__(self, workspace: Path, root: Path | None = None) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.root = root if root is not None else self.workspace / ".cerveau" / "blobs"

    def _path(self, digest: str) -> Path:
        # The digest becomes a path: validate it so a forged "../../x" cannot escape the store.
        if not _DIGEST.match(digest):
            raise BlobMissing(f"not a blake3 hex digest: {digest!r}")
        return self.root / digest[:2] / digest[2:]

    def put(self, data: bytes) -> str:
        digest = hash_bytes(data)
        path = self._path(digest)
        if not path.exists():
            atomic_write(path, data)
        return digest

    def has(self, digest: str) -> bool:
        try:
            return self._path(digest).is_file()
        except BlobMissing:
            return False

    def get(self, digest: str) -> bytes:
        try:
            data = self._path(digest).read_bytes()
        except FileNotFoundError:
            raise BlobMissing(f"no blob {digest[:12]} in {self.root}") from None
        # A torn or edited blob would restore the wrong bytes silently; blake3 makes the check
        # nearly free, so every read is verified.
        if hash_bytes(data) != digest:
            raise BlobCorrupt(f"blob {digest[:12]} does not match its digest")
        return data

    def resolve(self, rel: str | Path) -> Path:
        """The absolute path of a workspace-relative path, refusing anything that leaves it."""
        p = Path(rel)
        full = Path(os.path.realpath(p if p.is_absolute() else self.workspace / p))
        if full != self.workspace and self.workspace not in full.parents:
            raise OutsideWorkspace(f"{rel} is outside the workspace {self.workspace}")
        return full

    def rel(self, path: str | Path) -> str:
        return self.resolve(path).relative_to(self.workspace).as_posix()

    def snapshot_files(self, paths: Iterable[str | Path]) -> dict[str, str | None]:
        """Store the current bytes of each file; rel -> digest, or None when it does not exist."""
        out: dict[str, str | None] = {}
        for raw in paths:
            full = self.resolve(raw)
            rel = full.relative_to(self.workspace).as_posix()
            try:
                data = full.read_bytes()
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                out[rel] = None
                continue
            out[rel] = self.put(data)
        return out

    def restore(self, mapping: Mapping[str, str | None]) -> None:
        """Put each file back to the stored bytes (None deletes it). Atomic per file.

        Every blob is read and verified before the first file is touched, so a missing blob fails
        the restore without leaving the workspace half rolled back.
        """
        plan: list[tuple[Path, bytes | None]] = []
        for rel, digest in mapping.items():
            full = self.resolve(rel)
            plan.append((full, None if digest is None else self.get(digest)))
        for full, data in plan:
            if data is None:
                try:
                    full.unlink()
                except FileNotFoundError:
                    pass
            else:
                atomic_write(full, data)
