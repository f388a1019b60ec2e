"""Opening beneath a directory without following links: each refusal checked on disk afterwards,
through openat2 and through the component walk that replaces it where the syscall is missing."""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import stat
from pathlib import Path

import pytest

from cerveau_tui.workspace.io import openat
from cerveau_tui.workspace.io.beneath import (
    TEMP_PREFIX,
    FileTooLarge,
    NotRegularFile,
    UnsafePath,
    atomic_write_beneath,
    lstat_beneath,
    open_beneath,
    open_dir_beneath,
    open_state_dir,
    read_bytes_beneath,
    sweep_torn_temps,
    unlink_beneath,
)


def _openat2_works() -> bool:
    if not openat.use_openat2:
        return False
    try:
        os.close(openat._openat2(os.open("/", os.O_RDONLY), ".", os.O_RDONLY | os.O_DIRECTORY, 0))
    except openat._Unsupported:
        return False
    return True


OPENAT2 = _openat2_works()


@pytest.fixture(params=["openat2", "walk"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "openat2":
        if not OPENAT2:
            pytest.skip("openat2 is not available here")
        monkeypatch.setattr(openat, "use_openat2", True)
    else:
        monkeypatch.setattr(openat, "use_openat2", False)
    return str(request.param)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "x").write_text("outside's own\n")
    return out


def listing(d: Path) -> dict[str, str]:
    return {
        str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(d.rglob("*"))
    }


def test_reads_a_file_beneath_the_root(way: str, ws: Path) -> None:
    (ws / "a").mkdir()
    (ws / "a/f.txt").write_bytes(b"hello")
    assert read_bytes_beneath(ws, "a/f.txt") == b"hello"


def test_a_linked_directory_on_the_way_is_refused(way: str, ws: Path, outside: Path) -> None:
    (ws / "d").symlink_to(outside)
    with pytest.raises(
        UnsafePath, match=r"d/x: a symbolic link on the way .*refusing to follow it"
    ):
        read_bytes_beneath(ws, "d/x")


def test_a_linked_final_component_is_refused(way: str, ws: Path, outside: Path) -> None:
    (ws / "f").symlink_to(outside / "x")
    with pytest.raises(UnsafePath):
        open_beneath(ws, "f", os.O_RDONLY)


def test_a_link_pointing_inside_is_refused_too(way: str, ws: Path) -> None:
    # Callers open the realpath the policy judged; a link still there means something changed.
    (ws / "real.txt").write_text("r")
    (ws / "alias.txt").symlink_to("real.txt")
    with pytest.raises(UnsafePath):
        read_bytes_beneath(ws, "alias.txt")


def test_dotdot_is_refused_before_any_open(way: str, ws: Path) -> None:
    with pytest.raises(UnsafePath, match="`..`"):
        read_bytes_beneath(ws, "a/../../outside/x")


def test_a_write_through_a_linked_directory_leaves_the_target_unchanged(
    way: str, ws: Path, outside: Path
) -> None:
    (ws / "d").symlink_to(outside)
    before = listing(outside)
    with pytest.raises(UnsafePath):
        atomic_write_beneath(ws, "d/x", "overwritten")
    with pytest.raises(UnsafePath):
        atomic_write_beneath(ws, "d/new", "planted")
    assert listing(outside) == before


def test_a_write_over_a_linked_final_component_leaves_the_target_unchanged(
    way: str, ws: Path, outside: Path
) -> None:
    (ws / "f").symlink_to(outside / "x")
    with pytest.raises(UnsafePath):
        atomic_write_beneath(ws, "f", "overwritten")
    assert (outside / "x").read_text() == "outside's own\n"
    assert (ws / "f").is_symlink()


def test_a_write_creates_directories_and_leaves_no_temp_file(way: str, ws: Path) -> None:
    atomic_write_beneath(ws, "a/b/c.txt", "c")
    assert (ws / "a/b/c.txt").read_text() == "c"
    assert os.listdir(ws / "a/b") == ["c.txt"]


def test_a_write_keeps_the_mode_of_an_existing_file(way: str, ws: Path) -> None:
    (ws / "run.sh").write_text("old")
    os.chmod(ws / "run.sh", 0o751)
    atomic_write_beneath(ws, "run.sh", "new")
    assert os.stat(ws / "run.sh").st_mode & 0o777 == 0o751


def test_creating_directories_refuses_a_linked_component(way: str, ws: Path, outside: Path) -> None:
    (ws / "d").symlink_to(outside)
    with pytest.raises(UnsafePath):
        os.close(open_dir_beneath(ws, "d/sub/deeper", create=True))
    assert not (outside / "sub").exists()


def test_an_absolute_path_is_opened_from_slash_without_links(
    way: str, tmp_path: Path, outside: Path
) -> None:
    rel = (outside / "x").relative_to("/")
    assert read_bytes_beneath(Path("/"), rel) == b"outside's own\n"
    (tmp_path / "alias").symlink_to(outside)
    with pytest.raises(UnsafePath):
        read_bytes_beneath(Path("/"), (tmp_path / "alias" / "x").relative_to("/"))


def test_a_fifo_is_not_read(way: str, ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    with pytest.raises(NotRegularFile):
        read_bytes_beneath(ws, "pipe")  # would block forever if opened blocking


def test_a_file_past_the_limit_is_not_read(way: str, ws: Path) -> None:
    (ws / "big").write_bytes(b"x" * 100)
    with pytest.raises(FileTooLarge):
        read_bytes_beneath(ws, "big", max_bytes=10)


def test_lstat_reports_a_link_as_a_link_and_a_missing_file_as_none(way: str, ws: Path) -> None:
    (ws / "l").symlink_to("nowhere")
    st = lstat_beneath(ws, "l")
    assert st is not None and stat.S_ISLNK(st.st_mode)
    assert lstat_beneath(ws, "missing/file") is None


def test_unlink_removes_a_link_not_its_target(way: str, ws: Path, outside: Path) -> None:
    (ws / "l").symlink_to(outside / "x")
    assert unlink_beneath(ws, "l")
    assert (outside / "x").exists() and not (ws / "l").is_symlink()


def test_openat2_is_what_opens_when_available(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not OPENAT2:
        pytest.skip("openat2 is not available here")
    calls: list[str] = []
    real = openat._openat2

    def counting(dir_fd: int, rel: str, flags: int, mode: int) -> int:
        calls.append(rel)
        return real(dir_fd, rel, flags, mode)

    monkeypatch.setattr(openat, "use_openat2", True)
    monkeypatch.setattr(openat, "_openat2", counting)
    (ws / "f").write_text("f")
    read_bytes_beneath(ws, "f")
    assert calls == ["f"]


def test_a_kernel_without_openat2_falls_back_to_the_walk(
    ws: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def enosys(*_args: object) -> int:
        ctypes.set_errno(errno.ENOSYS)
        return -1

    monkeypatch.setattr(openat, "_syscall", enosys)
    monkeypatch.setattr(openat, "use_openat2", True)
    (ws / "f").write_text("f")
    (ws / "d").symlink_to(outside)
    assert read_bytes_beneath(ws, "f") == b"f"
    assert openat.use_openat2 is False
    with pytest.raises(UnsafePath):
        atomic_write_beneath(ws, "d/x", "overwritten")
    assert (outside / "x").read_text() == "outside's own\n"


def test_old_torn_temps_are_swept_and_young_ones_kept(ws: Path) -> None:
    (ws / "a").mkdir()
    old = ws / "a" / f"{TEMP_PREFIX}0001-f.txt"
    young = ws / f"{TEMP_PREFIX}0002-g.txt"
    old.write_text("torn")
    young.write_text("in progress")
    os.utime(old, (1000, 1000))
    os.utime(young, (1_000_000, 1_000_000))
    (ws / "keep.txt").write_text("k")
    removed = sweep_torn_temps(ws, older_than_s=300, clock=lambda: 1_000_100)
    assert removed == [f"a/{TEMP_PREFIX}0001-f.txt"]
    assert not old.exists() and young.exists() and (ws / "keep.txt").exists()


def test_the_sweep_does_not_follow_a_linked_directory(ws: Path, outside: Path) -> None:
    theirs = outside / f"{TEMP_PREFIX}0003-theirs"
    theirs.write_text("not ours")
    os.utime(theirs, (1000, 1000))
    (ws / "d").symlink_to(outside)
    assert sweep_torn_temps(ws, older_than_s=0, clock=lambda: 10_000) == []
    assert theirs.exists()


def test_a_planted_state_link_is_moved_aside_and_a_real_directory_made(
    ws: Path, outside: Path
) -> None:
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "sessions").symlink_to(outside)
    before = listing(outside)
    fd, moved = open_state_dir(ws, ".cerveau/sessions")
    try:
        os.close(os.open("s.jsonl", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    assert listing(outside) == before
    assert (ws / ".cerveau/sessions/s.jsonl").is_file()
    assert not (ws / ".cerveau/sessions").is_symlink()
    assert [(m.path, m.moved_to, m.pointed_to) for m in moved] == [
        (".cerveau/sessions", ".cerveau/sessions.suspect-1", str(outside))
    ]
    assert os.readlink(ws / ".cerveau/sessions.suspect-1") == str(outside)
    assert "moved it aside" in str(moved[0])


def test_a_clean_state_directory_reports_nothing_moved(ws: Path) -> None:
    fd, moved = open_state_dir(ws, ".cerveau/blobs")
    os.close(fd)
    assert moved == [] and (ws / ".cerveau/blobs").is_dir()
