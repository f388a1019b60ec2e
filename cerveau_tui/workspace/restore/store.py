"""A content-addressed blob store under `<workspace>/.cerveau/blobs/`, keyed by blake3.

Undo, plan checkpoints and the near-green rollback all need "the bytes this file had then".
Keying blobs by the same blake3 the fingerprint uses means a checkpoint's hash IS the key to its
content: no second index to drift out of step with the first.

Everything is opened beneath a directory fd without following links (workspace.io.beneath): a
`.cerveau/blobs` replaced by a link is moved aside (see `moved_aside`) instead of receiving the
blobs, and a workspace file swapped for a link is neither snapshotted through it nor restored
through it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from ...state_home import locate, state_path
from ..fingerprint.digest import hash_bytes
from ..io.beneath import (
    MovedAside,
    NotRegularFile,
    UnsafePath,
    atomic_write_beneath,
    lstat_beneath,
    open_dir_beneath,
    open_state_dir,
    read_bytes_beneath,
    unlink_beneath,
    write_at,
)

_DIGEST = re.compile(r"^[0-9a-f]{64}$")


class BlobMissing(KeyError):
    pass


class BlobCorrupt(ValueError):
    pass


class OutsideWorkspace(ValueError):
    pass


class RestoreRefused(UnsafePath):
    """Some files were not put back: a link on the way to them. The others were."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(
            "not restored, a symbolic link on the way to each (not followed): " + ", ".join(paths)
        )
        self.paths = paths


class BlobStore:
    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.root = state_path(self.workspace, "blobs")  # `.cerveau/blobs`, or the alternate's
        #: Links or files found planted at `.cerveau/blobs` (or `.cerveau`) and moved aside; the
        #: session shows them as warnings.
        self.moved_aside: list[MovedAside] = []

    def _check(self, digest: str) -> str:
        # The digest becomes a path: validate it so a forged "../../x" cannot escape the store.
        if not _DIGEST.match(digest):
            raise BlobMissing(f"not a blake3 hex digest: {digest!r}")
        return digest

    def _blobs_fd(self) -> int:
        fd, moved = open_state_dir(*locate(self.workspace, "blobs"))
        self.moved_aside.extend(moved)
        return fd

    def put(self, data: bytes) -> str:
        digest = hash_bytes(data)
        blobs = self._blobs_fd()
        try:
            sub = open_dir_beneath(blobs, digest[:2], create=True)
            try:
                st = lstat_beneath(sub, digest[2:])
                # Something that is not a regular file where the blob goes (a planted link) is
                # replaced: the rename replaces the link itself, never what it points at.
                if st is None or not stat.S_ISREG(st.st_mode):
                    write_at(sub, digest[2:], data)
            finally:
                os.close(sub)
        finally:
            os.close(blobs)
        return digest

    def has(self, digest: str) -> bool:
        try:
            self._check(digest)
        except BlobMissing:
            return False
        blobs = self._blobs_fd()
        try:
            st = lstat_beneath(blobs, f"{digest[:2]}/{digest[2:]}")
        except OSError:
            return False
        finally:
            os.close(blobs)
        return st is not None and stat.S_ISREG(st.st_mode)

    def get(self, digest: str) -> bytes:
        self._check(digest)
        blobs = self._blobs_fd()
        try:
            data = read_bytes_beneath(blobs, f"{digest[:2]}/{digest[2:]}")
        except (FileNotFoundError, NotADirectoryError, UnsafePath):
            raise BlobMissing(f"no blob {digest[:12]} in {self.root}") from None
        finally:
            os.close(blobs)
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
        """Store the current bytes of each file; rel -> digest, or None when it does not exist.

        The realpath names the file; it is then read beneath the workspace without following a
        link, so one swapped in meanwhile raises UnsafePath instead of copying what it points at.
        A FIFO, socket or device is left out of the mapping: it has no bytes to keep, and None
        would have a restore delete it (raising NotRegularFile ended a gated turn as "internal").
        """
        out: dict[str, str | None] = {}
        for raw in paths:
            rel = self.rel(raw)
            try:
                data = read_bytes_beneath(self.workspace, rel)
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                out[rel] = None
                continue
            except NotRegularFile:
                continue
            out[rel] = self.put(data)
        return out

    def restore(self, mapping: Mapping[str, str | None]) -> None:
        """Put each file back to the stored bytes (None deletes it). Atomic per file.

        Every blob is read and verified before the first file is touched, so a missing blob fails
        the restore without leaving the workspace half rolled back. The names are the
        workspace-relative ones the snapshot recorded, opened without following links: a file
        whose way now holds a link is skipped and named in RestoreRefused, raised once the
        others are back.
        """
        plan: list[tuple[str, bytes | None]] = []
        for rel, digest in mapping.items():
            plan.append(
                (_relative(self.workspace, rel), None if digest is None else self.get(digest))
            )
        refused: list[str] = []
        for rel, data in plan:
            try:
                if data is None:
                    unlink_beneath(self.workspace, rel)
                else:
                    atomic_write_beneath(self.workspace, rel, data)
            except UnsafePath:
                refused.append(rel)
        if refused:
            raise RestoreRefused(refused)


def _relative(workspace: Path, rel: str) -> str:
    """A recorded name, checked lexically: relative, no `..`, or absolute inside the workspace."""
    p = Path(rel)
    if p.is_absolute():
        try:
            p = p.relative_to(workspace)
        except ValueError:
            raise OutsideWorkspace(f"{rel} is outside the workspace {workspace}") from None
    if ".." in p.parts or not p.parts:
        raise OutsideWorkspace(f"{rel} is outside the workspace {workspace}")
    return p.as_posix()
