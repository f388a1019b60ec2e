"""The rewind store, bounded: blobs no kept restore point references are removed.

A point is kept while it is younger than `[rewind] max_age_days` and while the blobs the kept
points reference fit in `[rewind] max_mb` (the oldest points go first; a live session's newest
point always stays: its blobs are what its next point is a delta from). Referenced is counted
generously (a session's first kept manifest and every digest its later points name), so a kept
point never loses a blob. A blob younger than GRACE_S is never removed, referenced or not: the
near-green rollback puts its copies in the same store during a turn.

It runs at every session's start, next to the first fingerprint of the tree, so what it holds
is the session's peak: one session's manifest at a time (each session's Points kept its decoded
manifest until the end: ~35 MB each on 100,000 files, and every earlier session of the
workspace counted), and the store is read folder by folder, not into a map of every blob,
unless the size bound is passed (then the oldest points go, as before).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ...plan.persist import is_busy, list_sessions
from ...state_home import locate
from ...workspace.io.beneath import open_state_dir
from ...workspace.io.openat import open_dir_beneath
from ...workspace.restore.manifest_stream import iter_manifest
from ...workspace.restore.store import BlobMissing, BlobStore
from .points import Points, read_points

GRACE_S = 3600.0


@dataclass
class StoreSize:
    blobs: int
    bytes: int


@dataclass
class Collected:
    removed: int
    freed: int
    kept_points: int
    left: StoreSize


def _blobs(workspace: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(digest, status) of every regular blob, read one folder at a time beneath the store's
    folder fd (never made here: doctor reads, and a workspace with no store has none); a blob
    gone meanwhile (another session's collector) is skipped."""
    try:
        fd = open_dir_beneath(*locate(workspace, "blobs"))
    except OSError:
        return
    try:
        for sub in os.listdir(fd):
            if len(sub) != 2:
                continue
            try:
                sfd = os.open(sub, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                continue
            try:
                for name in os.listdir(sfd):
                    try:
                        st = os.stat(name, dir_fd=sfd, follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode):
                        yield sub + name, st
            finally:
                os.close(sfd)
    finally:
        os.close(fd)


def blob_sizes(workspace: Path) -> dict[str, tuple[int, float]]:
    """digest -> (size, mtime) of every blob."""
    return {d: (st.st_size, st.st_mtime) for d, st in _blobs(workspace)}


def store_size(workspace: Path) -> StoreSize:
    sizes = blob_sizes(workspace)
    return StoreSize(len(sizes), sum(s for s, _ in sizes.values()))


def _time(p: str) -> float:
    try:
        return datetime.fromisoformat(p).timestamp()
    except ValueError:
        return 0.0


def _manifest_digests(pts: Points, first: int) -> set[str]:
    """The digests point `first`'s manifest names. A full point (every session's first, the
    one kept while nothing expired) is streamed: its digests only, never the decoded manifest."""
    p = pts.points[first]
    if not p.full:
        return {e[0] for e in pts.manifest(first).values()}
    try:
        return {e[0] for _, e in iter_manifest(pts.store.get(p.full))}
    except (BlobMissing, ValueError) as exc:
        raise LookupError(f"restore point {p.id}: {exc}") from None


def _referenced(pts: Points, first: int) -> set[str]:
    if first >= len(pts.points):
        return set()
    try:
        refs = _manifest_digests(pts, first)
    except LookupError:
        refs = set()
    finally:
        pts._cache.clear()  # one decoded manifest at a time (see the module)
    for p in pts.points[: first + 1][::-1]:
        if p.full:
            refs.add(p.full)
            break
    for p in pts.points[first + 1 :]:
        if p.full:
            refs.add(p.full)
        refs.update(e[0] for e in p.changes.values() if e is not None)
    return refs


def collect(
    workspace: Path, *, max_age_days: float, max_mb: float, now: float | None = None
) -> Collected:
    now = time.time() if now is None else now
    store = BlobStore(workspace)
    sessions: dict[str, Points] = {}
    live: set[str] = set()
    for sid in list_sessions(workspace):
        try:
            sessions[sid] = read_points(workspace, sid, store)
        except (OSError, ValueError, LookupError):
            continue
        if is_busy(workspace, sid):
            live.add(sid)

    def first_kept(pts: Points, sid: str, cutoff: float) -> int:
        for i, p in enumerate(pts.points):
            if _time(p.time) >= cutoff:
                return i
        return len(pts.points) - 1 if sid in live and pts.points else len(pts.points)

    def refs_at(cutoff: float) -> set[str]:
        out: set[str] = set()
        for sid, pts in sessions.items():
            out |= _referenced(pts, first_kept(pts, sid, cutoff))
        return out

    cutoff = now - max_age_days * 86400
    refs = refs_at(cutoff)
    limit = max_mb * (1 << 20)
    # One pass over the store: what the kept points reference weighs, and what nothing does.
    used, count, total, orphans = _sweep_list(workspace, refs, now)
    if used > limit:
        # The oldest points go first, until what the rest reference fits.
        sizes = blob_sizes(workspace)
        times = sorted(
            {_time(p.time) for s in sessions.values() for p in s.points if _time(p.time) > cutoff}
        )
        lo, hi = 0, len(times)
        while lo < hi:
            mid = (lo + hi) // 2
            if sum(sizes.get(d, (0, 0))[0] for d in refs_at(times[mid] + 1e-6)) <= limit:
                hi = mid
            else:
                lo = mid + 1
        cutoff = times[lo] + 1e-6 if lo < len(times) else now + 1
        refs = refs_at(cutoff)
        orphans = [
            (d, size)
            for d, (size, mtime) in sizes.items()
            if d not in refs and now - mtime >= GRACE_S
        ]
        del sizes
    removed, freed = _remove(workspace, orphans)
    kept = sum(len(p.points) - first_kept(p, s, cutoff) for s, p in sessions.items())
    left = StoreSize(count - removed, total - freed)
    return Collected(removed, freed, kept, left)


def _sweep_list(
    workspace: Path, refs: set[str], now: float
) -> tuple[int, int, int, list[tuple[str, int]]]:
    """(bytes the references weigh, blobs, bytes, [(digest, size) referenced by nothing and past
    the grace]), read one folder at a time beneath the store's fd."""
    used = count = total = 0
    orphans: list[tuple[str, int]] = []
    for digest, st in _blobs(workspace):
        count += 1
        total += st.st_size
        if digest in refs:
            used += st.st_size
        elif now - st.st_mtime >= GRACE_S:
            orphans.append((digest, st.st_size))
    return used, count, total, orphans


def _remove(workspace: Path, orphans: list[tuple[str, int]]) -> tuple[int, int]:
    removed = freed = 0
    try:
        fd, _ = open_state_dir(*locate(workspace, "blobs"))
    except OSError:
        return removed, freed
    try:
        for digest, size in orphans:
            try:  # the two-letter folder opened without following a link planted there
                sfd = os.open(digest[:2], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                continue
            try:
                os.unlink(digest[2:], dir_fd=sfd)
            except OSError:
                continue
            finally:
                os.close(sfd)
            removed += 1
            freed += size
    finally:
        os.close(fd)
    return removed, freed
