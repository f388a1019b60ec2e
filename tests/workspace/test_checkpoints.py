"""workspace/restore/checkpoints.py: a manifest taken and put back, from the host's side: bytes, modes,
links kept as links, a folder where a file was (and the reverse), and a link planted on the way
removed itself, never followed (what it points at is untouched)."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter
from cerveau_tui.workspace.restore.checkpoints import Capture, restore
from cerveau_tui.workspace.restore.store import BlobStore


def state(ws: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for root, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".cerveau"]
        for name in [*files, *(d for d in dirs if Path(root, d).is_symlink())]:
            p = Path(root, name)
            st = p.lstat()
            body = os.readlink(p).encode() if stat.S_ISLNK(st.st_mode) else p.read_bytes()
            out[p.relative_to(ws).as_posix()] = (hashlib.sha256(body).hexdigest(), st.st_mode)
    return out


def capture(ws: Path) -> Capture:
    return Capture(BlobStore(ws), Fingerprinter(ws))


def test_bytes_modes_links_and_kinds_come_back(tmp_path):
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "a.txt").write_text("a\n")
    (ws / "run.sh").write_text("echo\n")
    (ws / "run.sh").chmod(0o750)
    (ws / "d" / "f.txt").write_text("f\n")
    (ws / "x").write_text("a file named x\n")
    os.symlink("a.txt", ws / "ln")
    cap = capture(ws)
    target = cap.take()
    want = state(ws)
    # A command's doing: rewrite, chmod, delete, a folder where x was, a file where d was, the
    # link repointed, a new tree.
    (ws / "a.txt").write_text("rewritten\n")
    (ws / "run.sh").chmod(0o600)
    (ws / "x").unlink()
    (ws / "x" / "y").mkdir(parents=True)
    (ws / "x" / "y" / "z.txt").write_text("z\n")
    (ws / "d" / "f.txt").unlink()
    (ws / "d").rmdir()
    (ws / "d").write_text("now a file\n")
    (ws / "ln").unlink()
    os.symlink("run.sh", ws / "ln")
    time.sleep(0.15)  # past the fingerprint's racy window
    now = cap.take()
    done = restore(cap.store, target, now)
    assert done.refused == []
    assert state(ws) == want
    assert not (ws / "x").is_dir() and (ws / "d").is_dir()


def test_a_link_planted_on_the_way_is_removed_not_followed(tmp_path):
    ws, out = tmp_path / "ws", tmp_path / "out"
    (ws / "d").mkdir(parents=True)
    out.mkdir()
    (ws / "d" / "f.txt").write_text("before\n")
    (out / "f.txt").write_text("outside's own\n")
    cap = capture(ws)
    target = cap.take()
    (ws / "d" / "f.txt").unlink()
    (ws / "d").rmdir()
    (ws / "d").symlink_to(out)
    time.sleep(0.15)
    done = restore(cap.store, target, cap.take())
    assert (out / "f.txt").read_text() == "outside's own\n"  # never written through the link
    assert not (ws / "d").is_symlink() and (ws / "d" / "f.txt").read_text() == "before\n"
    assert done.removed == ["d"] and done.written == ["d/f.txt"]
