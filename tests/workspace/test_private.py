"""A workspace is private by its properties (workspace/private.py): one rule per test, each on a
real folder whose mode or owner makes the property true; the person's uid and the group's
members are injected where making real users would only slow the test down."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cerveau_tui.workspace.private import SharedWorkspace, refuse_shared, require_private

ME = os.geteuid()


def _folder(tmp_path: Path, mode: int, name: str = "ws") -> Path:
    d = tmp_path / name
    d.mkdir()
    d.chmod(mode)  # chmod, not mkdir's mode: the umask would take rights away
    return d


def test_a_folder_of_ones_own_is_private(tmp_path: Path) -> None:
    assert refuse_shared(_folder(tmp_path, 0o755)) is None


def test_a_sticky_folder_is_refused_as_shared(tmp_path: Path) -> None:
    ws = _folder(tmp_path, 0o1777)
    said = refuse_shared(ws)
    assert said is not None and "sticky bit, mode 1777" in said and "mkdir -m 700" in said


def test_a_sticky_folder_is_refused_even_when_no_one_else_may_write(tmp_path: Path) -> None:
    said = refuse_shared(_folder(tmp_path, 0o1755))
    assert said is not None and "sticky" in said


def test_the_top_of_a_shared_scratch_filesystem_is_named_as_such(tmp_path: Path) -> None:
    ws = _folder(tmp_path, 0o1777)
    said = refuse_shared(ws, is_mount=lambda p: p == str(ws))
    assert said is not None and "scratch filesystem every user shares" in said


def test_a_folder_writable_by_every_user_is_refused(tmp_path: Path) -> None:
    ws = _folder(tmp_path, 0o777)
    said = refuse_shared(ws)
    assert said is not None and "writable by every user" in said and "chmod o-w" in said


def test_a_folder_owned_by_another_uid_is_refused(tmp_path: Path) -> None:
    ws = _folder(tmp_path, 0o755)
    said = refuse_shared(ws, euid=ME + 4242)
    assert said is not None and "owned by another user" in said


def test_a_group_writable_folder_is_refused_when_the_group_has_other_members(
    tmp_path: Path,
) -> None:
    ws = _folder(tmp_path, 0o775)
    said = refuse_shared(ws, members=lambda gid: {"mallory"})
    assert said is not None and "writable by its group" in said and "mallory" in said


def test_a_group_writable_folder_of_a_private_group_is_private(tmp_path: Path) -> None:
    # umask 002 with a user-private group (alice:alice) makes 0775 folders: nobody else is in it.
    ws = _folder(tmp_path, 0o775)
    assert refuse_shared(ws, members=lambda gid: set()) is None


def test_a_link_is_judged_by_what_it_points_to(tmp_path: Path) -> None:
    shared = _folder(tmp_path, 0o1777, "shared")
    (tmp_path / "link").symlink_to(shared)
    said = refuse_shared(tmp_path / "link")
    assert said is not None and str(shared) in said


def test_a_folder_under_a_parent_anyone_may_rename_in_is_refused(tmp_path: Path) -> None:
    parent = _folder(tmp_path, 0o777, "open")
    (parent / "ws").mkdir(mode=0o755)
    said = refuse_shared(parent / "ws")
    assert said is not None and f"the folder above it, {parent}" in said


def test_a_folder_under_a_sticky_parent_is_private(tmp_path: Path) -> None:
    # /tmp/mine: only its owner may rename an entry of a sticky folder.
    parent = _folder(tmp_path, 0o1777, "sticky")
    (parent / "ws").mkdir()
    (parent / "ws").chmod(0o755)
    assert refuse_shared(parent / "ws") is None


def test_a_folder_under_a_parent_of_another_user_is_refused(tmp_path: Path) -> None:
    if ME != 0:
        pytest.skip("chown to another uid needs root")
    parent = _folder(tmp_path, 0o755, "theirs")
    os.chown(parent, 65534, 65534)
    (parent / "ws").mkdir()
    said = refuse_shared(parent / "ws")
    assert said is not None and f"the folder above it, {parent}, is owned by another user" in said


@pytest.mark.parametrize("path", ["/tmp", "/var/tmp", "/dev/shm"])
def test_the_machines_shared_folders_are_refused(path: str) -> None:
    if not os.path.isdir(path):
        pytest.skip(f"no {path} here")
    said = refuse_shared(Path(path))
    assert said is not None and said.startswith(f"refusing the workspace {path}:")


def test_require_private_raises_with_the_sentence(tmp_path: Path) -> None:
    with pytest.raises(SharedWorkspace, match="writable by every user"):
        require_private(_folder(tmp_path, 0o777))


def test_the_refusal_is_one_line(tmp_path: Path) -> None:
    for mode in (0o1777, 0o777):
        said = refuse_shared(_folder(tmp_path, mode, f"m{mode:o}"))
        assert said is not None and "\n" not in said
