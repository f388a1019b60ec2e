from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter
from cerveau_tui.workspace.restore.store import (
    BlobCorrupt,
    BlobMissing,
    BlobStore,
    OutsideWorkspace,
    RestoreRefused,
)


def test_put_then_get_round_trips(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    d = store.put(b"hello")
    assert store.get(d) == b"hello"
    assert (tmp_path / ".cerveau" / "blobs" / d[:2] / d[2:]).is_file()


def test_digest_matches_the_fingerprint_of_the_same_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"same")
    assert BlobStore(tmp_path).put(b"same") == Fingerprinter(tmp_path).hash_file("a.txt")


def test_unknown_and_malformed_digests_are_missing(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    with pytest.raises(BlobMissing):
        store.get("0" * 64)
    with pytest.raises(BlobMissing):
        store.get("../../etc/passwd")


def test_a_tampered_blob_is_refused(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    d = store.put(b"original")
    (tmp_path / ".cerveau" / "blobs" / d[:2] / d[2:]).write_bytes(b"tampered")
    with pytest.raises(BlobCorrupt):
        store.get(d)


def test_snapshot_then_restore_undoes_edits_creations_and_deletions(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a1")
    (tmp_path / "b.txt").write_text("b1")
    store = BlobStore(tmp_path)
    snap = store.snapshot_files(["a.txt", "b.txt", "c.txt"])
    assert snap["c.txt"] is None
    (tmp_path / "a.txt").write_text("a2")
    (tmp_path / "b.txt").unlink()
    (tmp_path / "c.txt").write_text("c2")
    store.restore(snap)
    assert (tmp_path / "a.txt").read_text() == "a1"
    assert (tmp_path / "b.txt").read_text() == "b1"
    assert not (tmp_path / "c.txt").exists()


def test_restore_with_a_missing_blob_touches_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("now")
    store = BlobStore(tmp_path)
    good = store.put(b"then")
    with pytest.raises(BlobMissing):
        store.restore({"a.txt": good, "b.txt": "f" * 64})
    assert (tmp_path / "a.txt").read_text() == "now"


def test_paths_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = BlobStore(ws)
    with pytest.raises(OutsideWorkspace):
        store.restore({"../evil.txt": store.put(b"x")})
    assert not (tmp_path / "evil.txt").exists()


def _listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


def test_a_planted_blobs_link_receives_nothing_and_is_reported(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "blobs").symlink_to(out)
    store = BlobStore(ws)
    d = store.put(b"kept safe")
    assert _listing(out) == []
    assert (ws / ".cerveau" / "blobs" / d[:2] / d[2:]).read_bytes() == b"kept safe"
    assert [m.path for m in store.moved_aside] == [".cerveau/blobs"]


def test_a_blob_planted_as_a_link_is_not_read_through(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    secret = tmp_path.parent / (tmp_path.name + "-secret")
    secret.write_bytes(b"secret")
    d = store.put(b"secret")
    blob = tmp_path / ".cerveau" / "blobs" / d[:2] / d[2:]
    blob.unlink()
    blob.symlink_to(secret)
    with pytest.raises(BlobMissing):
        store.get(d)


def test_snapshot_does_not_copy_a_file_swapped_for_a_link(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    (out / "f").write_text("outside")
    (ws / "d").mkdir()
    store = BlobStore(ws)
    (ws / "d").rmdir()
    (ws / "d").symlink_to(out)
    with pytest.raises(OutsideWorkspace):  # the realpath now lands outside: not snapshotted
        store.snapshot_files(["d/f"])


def test_restore_through_a_directory_swapped_for_a_link_writes_nothing_there(
    tmp_path: Path,
) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    (out / "f.txt").write_text("outside's own")
    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("then")
    (ws / "a.txt").write_text("a then")
    store = BlobStore(ws)
    snap = store.snapshot_files(["d/f.txt", "a.txt"])
    (ws / "a.txt").write_text("a now")
    (ws / "d" / "f.txt").unlink()
    (ws / "d").rmdir()
    (ws / "d").symlink_to(out)
    with pytest.raises(RestoreRefused) as info:
        store.restore(snap)
    assert info.value.paths == ["d/f.txt"]
    assert (out / "f.txt").read_text() == "outside's own"
    assert (ws / "a.txt").read_text() == "a then"  # the rest was put back
