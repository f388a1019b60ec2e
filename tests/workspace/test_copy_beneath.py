"""The gate's copy of the workspace is made by descriptor, following no link: a path-based copy
(shutil.copytree) into `.cerveau/verify` was redirected by a rename mid-copy into a host folder.
Checked on the host: the outside folder stays empty, links stay links, FIFOs do not block."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cerveau_tui.workspace.io import copy_beneath
from cerveau_tui.workspace.io.copy_beneath import CopyTooLarge, copy_tree_beneath, remove_beneath

DEST = ".cerveau/verify"


def _project(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "pkg").mkdir(parents=True)
    (ws / ".cerveau").mkdir()
    outside.mkdir()
    for i in range(5):
        (ws / "pkg" / f"m{i}.py").write_text(f"x = {i}\n")
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    return ws, outside


def test_the_copy_holds_the_tree_with_modes_and_skips(tmp_path: Path) -> None:
    ws, _ = _project(tmp_path)
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "big.js").write_text("x")
    copy_tree_beneath(ws, DEST, skip={".cerveau", "node_modules"})
    dest = ws / DEST
    assert (dest / "pkg" / "m3.py").read_text() == "x = 3\n"
    assert os.stat(dest / "run.sh").st_mode & 0o777 == 0o755
    assert not (dest / "node_modules").exists() and not (dest / ".cerveau").exists()


def test_a_swap_of_the_destination_for_a_link_mid_copy_writes_nothing_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, outside = _project(tmp_path)
    real = copy_beneath._copy_file
    swapped: list[bool] = []

    def racing(src: int, dst: int, name: str, mode: int, budget: list[int]) -> int:
        if not swapped:  # what a background process did with renameat2(RENAME_EXCHANGE)
            os.rename(ws / DEST, ws / ".cerveau" / "moved")
            os.symlink(outside, ws / DEST)
            swapped.append(True)
        return real(src, dst, name, mode, budget)

    monkeypatch.setattr(copy_beneath, "_copy_file", racing)
    copy_tree_beneath(ws, DEST, skip={".cerveau"})
    assert swapped and list(outside.iterdir()) == []
    assert (ws / ".cerveau" / "moved" / "pkg" / "m4.py").exists()  # the copy went on, where it was
    remove_beneath(ws, DEST)
    assert outside.is_dir() and not os.path.lexists(ws / DEST)  # the link removed, not followed


def test_links_are_copied_as_links_and_fifos_are_skipped(tmp_path: Path) -> None:
    ws, outside = _project(tmp_path)
    (outside / "secret").write_text("host file\n")
    (ws / "out").symlink_to(outside)
    os.mkfifo(ws / "pipe")
    copy_tree_beneath(ws, DEST, skip={".cerveau"})
    dest = ws / DEST
    assert os.readlink(dest / "out") == str(outside)
    assert not os.path.lexists(dest / "pipe")
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]


def test_a_leftover_destination_link_is_removed_without_following(tmp_path: Path) -> None:
    ws, outside = _project(tmp_path)
    (outside / "keep").write_text("mine\n")
    os.symlink(outside, ws / DEST)
    remove_beneath(ws, DEST)
    assert (outside / "keep").read_text() == "mine\n"
    copy_tree_beneath(ws, DEST, skip={".cerveau"})
    assert (ws / DEST).is_dir() and not (ws / DEST).is_symlink()


def test_past_the_budget_or_the_depth_the_copy_gives_up(tmp_path: Path) -> None:
    ws, _ = _project(tmp_path)
    with pytest.raises(CopyTooLarge):
        copy_tree_beneath(ws, DEST, skip={".cerveau"}, max_bytes=10)
    remove_beneath(ws, DEST)
    deep = ws / "d"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY)
    try:
        for _ in range(copy_beneath.MAX_DEPTH + 5):  # by descriptor: the path would be too long
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
    finally:
        os.close(fd)
    with pytest.raises(CopyTooLarge):
        copy_tree_beneath(ws, DEST, skip={".cerveau"})
    remove_beneath(ws, DEST)
