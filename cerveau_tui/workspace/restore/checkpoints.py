"""Workspace checkpoints: every tracked file's bytes and mode, kept in the blob store, and put back.

A checkpoint is a manifest, rel path -> (blake3 digest, mode), over what the fingerprint tracks
(every file .gitignore and the ignored folders, `.cerveau` among them, leave in). The bytes live in
the blob store (store.py) under the same digest the fingerprint computes, so keeping the store in
step costs one read and one write per file whose digest the last checkpoint did not already hold:
a turn that changed ten files of ten thousand stores ten blobs. Because the store is in step at
every checkpoint, the before-image of anything a command changes is already stored when the
command starts, whatever the command does.

Why the blob store and not a shadow git under `.cerveau/`: a shadow `git add -A && git commit`
re-stats and re-hashes (SHA-1, zlib) the index on every call and writes one loose object per
changed file plus trees, needs a git binary on the host, and runs git's own config and hooks
machinery inside a workspace the model writes to (the guard in git_change.py exists because a
planted hook or `core.fsmonitor` runs at the next git); the store is already here, hashes with the
fingerprint's stat cache, and opens everything beneath an fd without following a link.
benchmarks/rewind.py measures both.

A link is kept as the fingerprint keeps it: its digest is blake3(b"symlink\\0" + target), and the
blob stored under that digest is those bytes, so it is restored as the same link. A file that
cannot be read (permissions, larger than MAX_CAPTURE) is recorded as present but not captured
(digest ""): a rewind leaves it alone rather than deleting what it could not keep.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ...state_home import locate
from ..fingerprint.digest import hash_bytes
from ..fingerprint.fingerprinter import Fingerprinter
from ..fingerprint.snapshot import Snapshot, diff_snapshots
from ..git.change import guard_for
from ..io.beneath import (
    SETID,
    NotRegularFile,
    UnsafePath,
    lstat_beneath,
    open_dir_beneath,
    open_state_dir,
    read_bytes_beneath,
    replace_at,
    split_parent,
    write_new,
)
from .store import BlobMissing, BlobStore

#: A file bigger than this is not copied into the store (named as not captured instead).
MAX_CAPTURE = 64 << 20
LINK_PREFIX = b"symlink\0"
NOT_CAPTURED = ""  # the digest of a file present but not kept: never restored, never deleted

Entry = tuple[str, int]  # (digest, st_mode's file type and permission bits)
Manifest = dict[str, Entry]


class CheckpointExpired(LookupError):
    """A blob the checkpoint needs is gone (collected, or the store was deleted)."""


class Capture:
    """Keeps the blob store in step with the workspace; `take()` is one checkpoint's manifest."""

    def __init__(self, store: BlobStore, fingerprinter: Fingerprinter) -> None:
        self.store = store
        self.fp = fingerprinter
        self.root = store.workspace
        #: The last manifest taken (or seeded from the log): its digests are known stored.
        self.known: Manifest = {}
        self._verified = False  # `known` from a log: checked against the store once
        self.bytes_stored = 0  # new blob bytes written by the last take() (the benchmark reads)
        self.files_stored = 0
        self.looked_at = 0  # paths the last take() looked at (all, or only those that moved)
        self._snap: Snapshot | None = None  # the scan `known` was taken from
        #: The last take's start (the `known` it began from) and the only paths it found could
        #: differ (None: it looked at all): a point's delta from that manifest reads these only.
        self.moved_from: Manifest | None = None
        self.moved: set[str] | None = None
        self._mark = -1  # the fingerprint's restated mark just before that scan

    def seed(self, manifest: Mapping[str, Entry]) -> None:
        """The last checkpoint of a resumed session: its blobs are checked on the next take."""
        self.known = dict(manifest)
        self._verified = False

    def take(self) -> Manifest:
        blobs, moved = open_state_dir(*locate(self.root, "blobs"))  # the store's own folder
        self.store.moved_aside.extend(moved)
        try:
            return self._take(blobs)
        finally:
            os.close(blobs)

    def _take(self, blobs: int) -> Manifest:
        mark = self.fp.restated_mark()
        snap = self.fp.scan()
        self.bytes_stored = self.files_stored = 0
        moved = self._moved(snap)
        self.moved_from, self.moved = self.known, moved
        out: Manifest
        paths: Iterable[str] | set[str]
        if moved is None:
            out, paths = {}, snap.keys()
        else:
            out, paths = dict(self.known), moved
        self.looked_at = len(snap) if moved is None else len(moved)
        known_get = self.known.get
        verified = self._verified
        prefix = str(self.root) + "/"
        lstat = os.lstat
        mode_of = self.fp.mode_of
        # The digest comes from the fingerprint's stat-cached scan and the mode from what that
        # scan saw (a chmod re-stats the file there): a file whose digest the store holds costs
        # no system call. Only a new digest (or a mode not known) is stat'ed, and read.
        for rel in paths:
            digest = snap.get(rel)
            if digest is None:  # gone since the last take
                out.pop(rel, None)
                continue
            out.pop(rel, None)
            prev = known_get(rel)
            mode = mode_of(rel)
            if prev is not None and prev[0] == digest and digest and mode is not None:
                if verified or _has(blobs, digest):
                    out[rel] = (digest, mode)
                    continue
            try:
                st = lstat(prefix + rel)
            except OSError:
                continue
            kept = self._keep(blobs, rel, st)
            # The fingerprint's own objects when they say the same (the digest of the bytes
            # kept, the mode it saw): one string per digest in the process, not two (the first
            # point of a 100,000-file tree made 10 MB of equal digests and 2.7 MB of modes).
            out[rel] = (
                digest if kept == digest else kept,
                mode if mode == st.st_mode else st.st_mode,
            )
        self.known = out
        self._verified = True
        self._snap, self._mark = snap, mark
        return out

    def _moved(self, snap: Snapshot) -> set[str] | None:
        """The paths that may differ from `known`: those whose digest moved between the last
        take's scan and this one (the fingerprint's change journal: O(changed) when it watches)
        and those it stat'ed anew meanwhile (a chmod moves no digest). None: every path (the
        first take, a store to verify, or a fingerprint that no longer knows)."""
        if self._snap is None or not self._verified:
            return None
        restated = self.fp.restated_since(self._mark)
        if restated is None:
            return None
        return restated | set(diff_snapshots(self._snap, snap))

    def _keep(self, blobs: int, rel: str, st: os.stat_result) -> str:
        """Store one file's bytes (the ones read now: the digest is of what was kept)."""
        if st.st_size > MAX_CAPTURE:
            return NOT_CAPTURED
        try:
            if stat.S_ISLNK(st.st_mode):
                data = LINK_PREFIX + os.fsencode(os.readlink(self.root / rel))
            else:
                data = read_bytes_beneath(self.root, rel, MAX_CAPTURE)
        except (OSError, UnsafePath, NotRegularFile):
            return NOT_CAPTURED
        digest = hash_bytes(data)
        if not _has(blobs, digest):
            _put_blob(blobs, digest, data)
            self.bytes_stored += len(data)
            self.files_stored += 1
        return digest


def _has(blobs: int, digest: str) -> bool:
    try:
        st = os.stat(f"{digest[:2]}/{digest[2:]}", dir_fd=blobs, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode)


def _put_blob(blobs: int, digest: str, data: bytes) -> None:
    """One blob, beneath the store's fd, atomically, WITHOUT an fsync: a point's blobs are copies
    of bytes the workspace holds at that moment, and an fsync each cost ~10 ms (a turn's point
    on a loaded machine was 1.1 s for 10 files). Every read verifies its digest (store.get), so a
    blob a power loss tore makes that point "expired", never a wrong restore."""
    sub = open_dir_beneath(blobs, digest[:2], create=True)
    try:
        replace_at(sub, digest[2:], partial(write_new, sub, data=data, sync=False))
    finally:
        os.close(sub)


def delta(
    prev: Mapping[str, Entry], cur: Mapping[str, Entry], only: Iterable[str] | None = None
) -> dict[str, Entry | None]:
    """What changed from `prev` to `cur` (None: removed): what a checkpoint record holds.
    `only`: the paths that can differ (Capture.moved, when `prev` is what that take started
    from): O(changed), not a pass over every path."""
    if only is not None:
        return {r: cur.get(r) for r in only if prev.get(r) != cur.get(r)}
    out: dict[str, Entry | None] = {r: e for r, e in cur.items() if prev.get(r) != e}
    out.update({r: None for r in prev if r not in cur})
    return out


def apply_delta(base: Mapping[str, Entry], changes: Mapping[str, Entry | None]) -> Manifest:
    out = dict(base)
    for rel, e in changes.items():
        if e is None:
            out.pop(rel, None)
        else:
            out[rel] = e
    return out


def manifest_bytes(m: Mapping[str, Entry]) -> bytes:
    return json.dumps({r: list(m[r]) for r in sorted(m)}, separators=(",", ":")).encode()


def manifest_from(data: bytes) -> Manifest:
    raw = json.loads(data)
    if not isinstance(raw, dict):
        raise ValueError("a manifest is an object")
    return {str(r): _entry(e) for r, e in raw.items()}


def _entry(e: object) -> Entry:
    if not (isinstance(e, list | tuple) and len(e) == 2):
        raise ValueError(f"not a manifest entry: {e!r}")
    digest, mode = e
    if not isinstance(digest, str) or not isinstance(mode, int) or isinstance(mode, bool):
        raise ValueError(f"not a manifest entry: {e!r}")
    return digest, mode


def differs(target: Mapping[str, Entry], current: Mapping[str, Entry]) -> list[str]:
    """The paths a restore of `target` over `current` writes or deletes (not-captured ones aside)."""
    out = [
        r
        for r, e in target.items()
        if e[0] != NOT_CAPTURED and current.get(r) != e and current.get(r, ("x", 0))[0] != ""
    ]
    out += [r for r, e in current.items() if r not in target and e[0] != NOT_CAPTURED]
    return sorted(out)


@dataclass
class Restored:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    guarded: str = ""


def restore(
    store: BlobStore,
    target: Mapping[str, Entry],
    current: Mapping[str, Entry],
    skip: Iterable[str] = (),
) -> Restored:
    """Put the workspace back to `target` from `current`: files changed since get their bytes and
    mode back, files created since are removed (and the folders only they needed), files deleted
    since come back. Atomic per file (a temporary beside it, then a rename), every open beneath
    the workspace without following a link, through the git guard like every harness write.

    Every blob is read and verified before the first file is touched: an expired checkpoint
    (CheckpointExpired) leaves the workspace as it was."""
    ws = store.workspace
    skipped = set(skip)
    paths = [p for p in differs(target, current) if p not in skipped]
    writes: list[tuple[str, bytes, int]] = []
    removes: list[str] = []
    for rel in paths:
        e = target.get(rel)
        if e is None:
            removes.append(rel)
            continue
        try:
            writes.append((rel, store.get(e[0]), e[1]))
        except (BlobMissing, ValueError) as exc:
            raise CheckpointExpired(f"{rel}: {exc}") from None
    done = Restored()
    keep_dirs = {"/".join(p.split("/")[:i]) for p in target for i in range(1, p.count("/") + 1)}

    def apply() -> None:
        for rel in removes:  # first: a file where a restored folder goes must leave
            try:
                _remove(ws, rel)
                done.removed.append(rel)
            except OSError:
                done.refused.append(rel)
        _prune(ws, removes, keep_dirs)
        for rel, data, mode in writes:
            try:
                _put(ws, rel, data, mode)
                done.written.append(rel)
            except OSError:
                done.refused.append(rel)

    _, verdict = guard_for(ws).change(paths, apply)
    if verdict:
        done.guarded = verdict.note(ws, "this rewind")
    done.refused.sort()
    return done


def _put(ws: Path, rel: str, data: bytes, mode: int) -> None:
    dirs, name = split_parent(rel)
    parent = open_dir_beneath(ws, "/".join(dirs), create=True)  # refuses a link on the way
    try:
        st = lstat_beneath(parent, name)
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a folder is where the file goes", rel)
        make: Callable[[str], object]
        if stat.S_ISLNK(mode):
            if not data.startswith(LINK_PREFIX):
                raise OSError(errno.EINVAL, "not a link's blob", rel)
            make = partial(os.symlink, os.fsdecode(data[len(LINK_PREFIX) :]), dir_fd=parent)
        else:
            # Never a set-id bit: the harness writes as the person (as root, root's files), and
            # a mode read back from a record is not the person's to vouch for; the sandbox
            # refuses these bits to commands (sandbox/setid.py), so a restore must not be the way
            # they come back.
            make = partial(write_new, parent, data=data, mode=stat.S_IMODE(mode) & ~SETID)
        replace_at(parent, name, make)
        os.fsync(parent)
    finally:
        os.close(parent)


def _remove(ws: Path, rel: str) -> None:
    dirs, name = split_parent(rel)
    try:
        parent = open_dir_beneath(ws, "/".join(dirs))
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        st = lstat_beneath(parent, name)
        if st is None:
            return
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a folder is where the file was", rel)
        os.unlink(name, dir_fd=parent)  # a link is removed itself, never its target
    finally:
        os.close(parent)


def _prune(ws: Path, removed: list[str], keep: set[str]) -> None:
    """Folders left empty by the removals, that no restored file needs: a command's `mkdir -p`
    tree goes with its files. A folder that is not empty (the person's) stays."""
    dirs = {"/".join(r.split("/")[:i]) for r in removed for i in range(1, r.count("/") + 1)}
    for d in sorted(dirs - keep, key=lambda x: -x.count("/")):
        parts, name = split_parent(d)
        try:
            parent = open_dir_beneath(ws, "/".join(parts))
        except OSError:
            continue
        try:
            os.rmdir(name, dir_fd=parent)
        except OSError:
            pass
        finally:
            os.close(parent)
