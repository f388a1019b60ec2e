"""What the fingerprint holds per file on a big tree (issue 26: memory under 150 MB above a
10-file session at 100,000 files): one record per file, shared by the snapshots; nothing that
copies the tree per snapshot or per iteration. Sizes are compared, never fixed in bytes: what a
scan keeps is measured (tracemalloc) against a copy of the tree as one flat mapping, the cost a
snapshot must not pay; a copy per snapshot would be at least that much every time."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from cerveau_tui.session.rewind.gc import _referenced
from cerveau_tui.session.rewind.points import read_points
from cerveau_tui.workspace.fingerprint import watch
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter
from cerveau_tui.workspace.fingerprint.stat_cache import _Entry
from cerveau_tui.workspace.restore.store import BlobStore

needs_inotify = pytest.mark.skipif(
    watch.TreeWatch("/").failed is not None, reason="inotify is not available here"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for i in range(12):
        d = root / f"pkg{i % 3}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.py").write_text(f"print({i})\n")
    return root


def live(root: Path) -> Fingerprinter:
    fp = Fingerprinter(root, watch=True)
    fp.scan()
    assert fp.status()["method"] == "inotify", fp.status()
    return fp


T = TypeVar("T")


def retained(make: Callable[[], T]) -> tuple[T, int]:
    """What `make()` returns, and the bytes still allocated after it returned."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = make()
        gc.collect()
        return out, tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    """20 folders of 100 files: one folder is a twentieth of the tree."""
    root = tmp_path / "wide"
    for d in range(20):
        (root / f"pkg{d}").mkdir(parents=True)
        for i in range(100):
            (root / f"pkg{d}" / f"f{i}.py").write_text(f"print({d}, {i})\n")
    return root


def flat_copy(fp: Fingerprinter) -> int:
    """What the tree costs as one {path: digest} mapping."""
    snap = fp.scan()
    return retained(lambda: dict(snap.items()))[1]


@needs_inotify
def test_the_snapshots_share_the_live_trees_folder_records(wide: Path) -> None:
    fp = live(wide)
    flat = flat_copy(fp)

    def ten_scans() -> list[object]:
        snaps: list[object] = []
        for i in range(10):
            (wide / f"pkg{i}" / "f0.py").write_text(f"changed {i}\n")
            snaps.append(fp.scan())
        return snaps

    snaps, kept = retained(ten_scans)
    assert len(snaps) == 10 and kept < 2 * flat  # a copy of the tree per snapshot: >= 10 flat
    fp.close()


@needs_inotify
def test_a_change_copies_its_folder_only_and_the_older_snapshot_keeps_its_value(
    wide: Path,
) -> None:
    fp = live(wide)
    flat = flat_copy(fp)
    before = fp.scan()
    old = before["pkg0/f0.py"]
    time.sleep(0.01)
    (wide / "pkg0" / "f0.py").write_text("changed\n")
    (wide / "pkg0" / "new.py").write_text("new\n")
    after, kept = retained(fp.scan)
    assert before["pkg0/f0.py"] == old and "pkg0/new.py" not in before  # copy on write
    assert after["pkg0/f0.py"] != old and "pkg0/new.py" in after
    assert kept < flat / 3  # pkg0's records copied; the 19 other folders shared
    assert len(after) == len(before) + 1
    fp.close()


@needs_inotify
def test_the_first_snapshot_is_not_journalled_as_a_set_of_every_path(tree: Path) -> None:
    fp = live(tree)
    assert fp._journal.sets[0] is None  # "everything changed", not 12 (or 100,000) paths
    first = fp.scan()
    (tree / "pkg1" / "f1.py").write_text("moved\n")
    assert fp.changed_since(first) == ["pkg1/f1.py"]
    fp.close()


@needs_inotify
def test_iterating_a_live_snapshot_keeps_no_flat_copy(wide: Path) -> None:
    fp = live(wide)
    flat = flat_copy(fp)
    snap = fp.scan()
    paths, _ = retained(lambda: list(snap))
    assert paths == sorted(paths) and len(paths) == 2000
    assert dict(snap.items()) == dict(Fingerprinter(wide).scan())
    _, kept = retained(lambda: len(list(snap)))
    assert kept < flat / 4  # before: a flat and a sorted copy stayed with the snapshot
    fp.close()


def test_a_stat_cache_entry_has_no_per_instance_dict() -> None:
    e = _Entry(1, 2, 3, "d" * 64, True, 0o100644)
    assert not hasattr(e, "__dict__")


def test_the_store_collector_keeps_no_decoded_manifest(tmp_path: Path) -> None:
    from cerveau_tui.plan.persist import SessionLog
    from cerveau_tui.session.rewind import Rewinder

    (tmp_path / "a.txt").write_text("1\n")
    log = SessionLog(tmp_path, "s1")
    rw = Rewinder(BlobStore(tmp_path), Fingerprinter(tmp_path), log)
    try:
        rw.take("turn")
        rw.take("end")
    finally:
        log.close()
    pts = read_points(tmp_path, "s1", BlobStore(tmp_path))
    assert _referenced(pts, 0)  # the first point's manifest names a.txt's blob
    assert pts._cache == {}  # each session's manifest goes once its references are read


def test_restore_points_keep_no_manifest_per_point(tmp_path: Path) -> None:
    from cerveau_tui.plan.persist import SessionLog
    from cerveau_tui.session.rewind import Rewinder

    log = SessionLog(tmp_path, "s2")
    rw = Rewinder(BlobStore(tmp_path), Fingerprinter(tmp_path), log)
    try:
        for i in range(6):
            (tmp_path / "a.txt").write_text(f"{i}\n")
            rw.take("turn")
            rw.take("end")
        assert len(rw.points._cache) <= 2  # the newest two, not one per point
        first = rw.points.manifest(0)  # an older one is rebuilt from the store
        assert rw.store.get(first["a.txt"][0]) == b"0\n"
    finally:
        log.close()


def test_a_streamed_manifest_reads_as_manifest_from_and_refuses_what_it_refuses() -> None:
    import json

    from cerveau_tui.workspace.restore.checkpoints import manifest_bytes, manifest_from
    from cerveau_tui.workspace.restore.manifest_stream import iter_manifest

    m = {"a": ("d" * 64, 0o100644), 'b/"x\\y': ("", 0o644), "é\n": ("e" * 64, 0o120777)}
    good = [manifest_bytes(m), b"{}", b" { } ", json.dumps({"a": ["x", 1]}, indent=2).encode()]
    for data in good:
        assert dict(iter_manifest(data)) == manifest_from(data)
    bad = [b"[]", b'{"a":["x",1]', b'{"a":["x",1]}x', b'{"a":1}', b'{"a" ["x",1]}', b""]
    for data in bad:
        with pytest.raises(ValueError):
            manifest_from(data)
        with pytest.raises(ValueError):
            dict(iter_manifest(data))
