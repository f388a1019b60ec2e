from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cerveau_tui.workspace.io.beneath import UnsafePath, atomic_write_beneath

REPO = Path(__file__).resolve().parents[2]


def test_writes_bytes_and_text(tmp_path: Path) -> None:
    atomic_write_beneath(tmp_path, "a.bin", b"\x00\x01")
    atomic_write_beneath(tmp_path, "b.txt", "héllo")
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "héllo"


def test_creates_missing_parent_directories(tmp_path: Path) -> None:
    atomic_write_beneath(tmp_path, "x/y/z.txt", "z")
    assert (tmp_path / "x" / "y" / "z.txt").read_text() == "z"


def test_keeps_the_mode_of_an_existing_file(tmp_path: Path) -> None:
    f = tmp_path / "run.sh"
    f.write_text("old")
    os.chmod(f, 0o751)
    atomic_write_beneath(tmp_path, f.name, "new")
    assert os.stat(f).st_mode & 0o777 == 0o751


def test_new_file_is_not_made_private(tmp_path: Path) -> None:
    atomic_write_beneath(tmp_path, "n.txt", "n")
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(tmp_path / "n.txt").st_mode & 0o777 == 0o666 & ~umask


def test_a_symlink_at_the_name_is_neither_followed_nor_replaced(tmp_path: Path) -> None:
    # Issue 10 changed this: writing through a link sent the harness's bytes wherever it pointed.
    (tmp_path / "target.txt").write_text("old")
    os.symlink("target.txt", tmp_path / "link.txt")
    with pytest.raises(UnsafePath):
        atomic_write_beneath(tmp_path, "link.txt", "new")
    assert os.path.islink(tmp_path / "link.txt")
    assert (tmp_path / "target.txt").read_text() == "old"


def test_a_write_failing_midway_keeps_the_old_content(tmp_path: Path) -> None:
    # A real failure part-way through: a file-size limit lower than the data makes write() fail
    # with EFBIG after the first bytes land. Run in a child so the limit does not touch pytest.
    f = tmp_path / "keep.txt"
    f.write_text("the old content\n")
    script = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "from cerveau_tui.workspace.io.beneath import atomic_write_beneath\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    atomic_write_beneath(Path(sys.argv[1]), 'keep.txt', b'x' * 100_000)\n"
        "except OSError as exc:\n"
        "    print('failed', exc.errno)\n"
        "    sys.exit(3)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f.read_text() == "the old content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]  # no temp file left behind
