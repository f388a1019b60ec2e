"""A restore point's modes come from what the fingerprint saw (Fingerprinter.mode_of), not from one
lstat per tracked file: a point costs O(files changed) stats. A chmod alone (no digest moves)
is still seen, walked or watched, and put back."""

from __future__ import annotations

import os
import time

import pytest

from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter
from cerveau_tui.workspace.restore.checkpoints import Capture, restore
from cerveau_tui.workspace.restore.store import BlobStore

FILES = 200


def tree(ws):
    for i in range(FILES):
        d = ws / f"d{i % 10}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(f"{i}\n")


@pytest.fixture(params=["walk", "watch"])
def fp_of(request, monkeypatch):
    monkeypatch.delenv("CERVEAU_FINGERPRINT", raising=False)
    made = []

    def make(ws):
        fp = Fingerprinter(ws, watch=request.param == "watch")
        made.append(fp)
        return fp

    yield make
    for fp in made:
        fp.close()


def test_a_point_stats_the_changed_files_not_every_file(tmp_path, fp_of, monkeypatch):
    ws = tmp_path / "ws"
    tree(ws)
    cap = Capture(BlobStore(ws), fp_of(ws))
    cap.take()
    time.sleep(0.15)  # past the racy window: the next scans are served from the stat cache
    cap.take()
    for i in range(3):
        (ws / f"d{i}" / f"f{i}.txt").write_text("changed\n")
    time.sleep(0.15)
    calls = []
    real = os.lstat

    def counting(path, *a, **kw):
        calls.append(path)
        return real(path, *a, **kw)

    monkeypatch.setattr(os, "lstat", counting)
    m = cap.take()
    monkeypatch.setattr(os, "lstat", real)
    assert m["d0/f0.txt"][0] != "" and len(m) == FILES
    assert len(calls) <= 12, f"{len(calls)} lstat calls for 3 changed of {FILES} files"
    if cap.fp.method == "inotify":  # the change journal: not even a look at the other files
        assert cap.looked_at == 3


def test_a_chmod_alone_is_seen_and_put_back(tmp_path, fp_of):
    ws = tmp_path / "ws"
    tree(ws)
    f = ws / "d1" / "f1.txt"
    f.chmod(0o644)
    cap = Capture(BlobStore(ws), fp_of(ws))
    time.sleep(0.15)
    before = cap.take()
    f.chmod(0o444)  # what a command did: the bytes are the same
    time.sleep(0.15)
    now = cap.take()
    assert now["d1/f1.txt"][0] == before["d1/f1.txt"][0]
    assert now["d1/f1.txt"][1] & 0o777 == 0o444
    done = restore(cap.store, before, now)
    assert done.written == ["d1/f1.txt"] and done.refused == []
    assert f.stat().st_mode & 0o777 == 0o644
    time.sleep(0.15)
    assert cap.take()["d1/f1.txt"][1] & 0o777 == 0o644  # the restore's own chmod is seen too


def test_a_points_delta_from_the_moved_paths_is_the_full_delta(tmp_path, fp_of):
    from cerveau_tui.session.rewind.points import Point, Points
    from cerveau_tui.workspace.restore.checkpoints import delta

    ws = tmp_path / "ws"
    tree(ws)
    store = BlobStore(ws)
    cap, pts = Capture(store, fp_of(ws)), Points(store)

    def point():
        m = cap.take()
        p = pts.next_delta(
            Point(id=str(len(pts.points)), at="turn"), m, (cap.moved_from, cap.moved)
        )
        base = pts.manifest(len(pts.points) - 1) if pts.points else None
        pts.add(p)
        return p, m, base

    time.sleep(0.15)
    point()
    (ws / "d0" / "f0.txt").write_text("rewritten\n")
    (ws / "d1" / "f1.txt").unlink()
    (ws / "d2" / "f2.txt").chmod(0o600)
    (ws / "d3" / "new.txt").write_text("new\n")
    time.sleep(0.15)
    p, m, base = point()
    assert cap.moved is not None  # the O(changed) path was taken
    assert p.changes == delta(base, m)
    assert set(p.changes) == {"d0/f0.txt", "d1/f1.txt", "d2/f2.txt", "d3/new.txt"}
    assert p.changes["d1/f1.txt"] is None
