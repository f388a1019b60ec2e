from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cerveau_tui.workspace.fingerprint.digest import LARGE_FILE, hash_bytes
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

LATER = 10**12  # a clock far past every mtime: no file counts as racily clean


def _clock() -> int:
    return time.time_ns() + LATER


def _tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("print('a')\n")
    (root / "src" / "b.py").write_text("print('b')\n")
    (root / "README.md").write_text("# hi\n")


def test_unchanged_workspace_has_the_same_digest(tmp_path: Path) -> None:
    _tree(tmp_path)
    fp = Fingerprinter(tmp_path)
    assert fp.scan().digest == fp.scan().digest
    assert Fingerprinter(tmp_path).scan().digest == fp.scan().digest


def test_byte_identical_workspaces_in_different_places_agree(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    _tree(tmp_path / "one")
    _tree(tmp_path / "two")
    assert (
        Fingerprinter(tmp_path / "one").scan().digest
        == Fingerprinter(tmp_path / "two").scan().digest
    )


def test_file_digest_is_blake3_of_its_bytes(tmp_path: Path) -> None:
    _tree(tmp_path)
    snap = Fingerprinter(tmp_path).scan()
    assert snap["src/a.py"] == hash_bytes(b"print('a')\n")
    assert sorted(snap) == ["README.md", "src/a.py", "src/b.py"]


def test_a_content_change_changes_the_digest(tmp_path: Path) -> None:
    _tree(tmp_path)
    fp = Fingerprinter(tmp_path)
    before = fp.scan()
    (tmp_path / "src" / "a.py").write_text("print('A')\n")
    after = fp.scan()
    assert after.digest != before.digest
    assert fp.changed_since(before) == ["src/a.py"]


def test_changed_since_reports_added_and_removed_files(tmp_path: Path) -> None:
    _tree(tmp_path)
    fp = Fingerprinter(tmp_path)
    before = fp.scan()
    (tmp_path / "src" / "b.py").unlink()
    (tmp_path / "new.txt").write_text("x")
    assert fp.changed_since(before) == ["new.txt", "src/b.py"]


def test_stat_cache_avoids_rereading_unchanged_files(tmp_path: Path) -> None:
    _tree(tmp_path)
    fp = Fingerprinter(tmp_path, clock=_clock)
    fp.scan()
    assert fp.hash_count == 3
    fp.scan()
    fp.hash_file("src/a.py")
    assert fp.hash_count == 3


def test_only_the_changed_file_is_rehashed(tmp_path: Path) -> None:
    _tree(tmp_path)
    fp = Fingerprinter(tmp_path, clock=_clock)
    fp.scan()
    (tmp_path / "src" / "b.py").write_text("print('bb')\n")
    fp.scan()
    assert fp.hash_count == 4


def test_racily_clean_same_size_rewrite_is_still_seen(tmp_path: Path) -> None:
    # The rewrite keeps size, inode and (forced here) mtime: only the racy rule can catch it.
    f = tmp_path / "a.txt"
    f.write_bytes(b"aaaa")
    fp = Fingerprinter(tmp_path)
    first = fp.scan()["a.txt"]
    st = os.stat(f)
    with open(f, "r+b") as fh:
        fh.write(b"bbbb")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert fp.scan()["a.txt"] != first


def test_gitignore_is_honoured(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n")
    (tmp_path / "debug.log").write_text("x")
    (tmp_path / "keep.log").write_text("x")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.o").write_text("x")
    snap = Fingerprinter(tmp_path).scan()
    assert "debug.log" not in snap and "build/out.o" not in snap
    assert "keep.log" in snap and ".gitignore" in snap


def test_nested_gitignore_applies_relative_to_its_directory(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "src" / ".gitignore").write_text("b.py\n")
    (tmp_path / "b.py").write_text("top")
    snap = Fingerprinter(tmp_path).scan()
    assert "src/b.py" not in snap and "b.py" in snap


def test_ignore_dirs_are_skipped_at_any_depth(tmp_path: Path) -> None:
    _tree(tmp_path)
    for d in (".git", ".cerveau", "src/__pycache__", "web/node_modules"):
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "x").write_text("x")
    assert sorted(Fingerprinter(tmp_path).scan()) == ["README.md", "src/a.py", "src/b.py"]


def test_hash_file_is_none_for_a_missing_file(tmp_path: Path) -> None:
    fp = Fingerprinter(tmp_path)
    assert fp.hash_file("nope.py") is None
    (tmp_path / "d").mkdir()
    assert fp.hash_file("d") is None


def test_large_files_hash_the_same_as_their_bytes(tmp_path: Path) -> None:
    data = os.urandom(LARGE_FILE + 12345)
    (tmp_path / "big.bin").write_bytes(data)
    assert Fingerprinter(tmp_path).hash_file("big.bin") == hash_bytes(data)


def test_repointing_a_symlink_is_a_change(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("x")
    (tmp_path / "y").write_text("y")
    os.symlink("x", tmp_path / "link")
    fp = Fingerprinter(tmp_path)
    before = fp.scan()
    os.unlink(tmp_path / "link")
    os.symlink("y", tmp_path / "link")
    assert fp.changed_since(before) == ["link"]


def test_a_fifo_swapped_in_after_the_lstat_is_refused_not_waited_on(tmp_path: Path) -> None:
    # A command replaces a file the model read with a FIFO between the lstat and the open: a
    # plain open() blocked the engine thread for good, outside the sandbox.
    import threading

    from cerveau_tui.workspace.fingerprint.digest import hash_path

    os.mkfifo(tmp_path / "notes.txt")
    errors: list[BaseException] = []

    def run() -> None:
        try:
            hash_path(tmp_path / "notes.txt", 10)
        except OSError as exc:
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)  # a bound on a hang, not a timing assertion
    assert not t.is_alive(), "hash_path blocked on a FIFO"
    assert errors


def test_a_link_swapped_in_is_not_followed_out_of_the_workspace(tmp_path: Path) -> None:
    from cerveau_tui.workspace.fingerprint.digest import hash_path

    outside = tmp_path / "outside.txt"
    outside.write_text("the person's file")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").symlink_to(outside)
    with pytest.raises(OSError):
        hash_path(tmp_path / "ws" / "notes.txt")


def test_a_large_file_hashes_the_same_through_the_mapping(tmp_path: Path) -> None:
    from cerveau_tui.workspace.fingerprint.digest import LARGE_FILE, hash_bytes, hash_path

    data = os.urandom(LARGE_FILE + 12345)
    (tmp_path / "big.bin").write_bytes(data)
    assert hash_path(tmp_path / "big.bin") == hash_bytes(data)
