"""The set-id sweep (setid.py) on its own: what it clears, what it must never touch, and the one
line the model reads. The end-to-end probes (both backends, root and an ordinary user) are in
tests/probes/test_setid_ipc_probes.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cerveau_tui.sandbox.base import CommandResult, CommandSpec, Grant, _sweep_setid
from cerveau_tui.sandbox.setid import SETID_BITS, setid_note, sweep, sweep_all


def _file(path: Path, mode: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"#!/bin/sh\n")
    path.chmod(mode)
    return path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_every_set_id_file_loses_both_bits_and_keeps_the_rest(tmp_path: Path) -> None:
    a = _file(tmp_path / "a", 0o4755)
    b = _file(tmp_path / ".git" / "objects" / "ab" / "cd", 0o2750)
    c = _file(tmp_path / "node_modules" / "x" / "bin", 0o6711)
    plain = _file(tmp_path / "plain", 0o755)
    found = sweep(tmp_path)
    assert sorted(f.rel for f in found) == [".git/objects/ab/cd", "a", "node_modules/x/bin"]
    assert (_mode(a), _mode(b), _mode(c), _mode(plain)) == (0o755, 0o750, 0o711, 0o755)
    assert all(f.action == "cleared" for f in found)


def test_a_file_without_read_permission_is_cleared_too(tmp_path: Path) -> None:
    # O_PATH and the fd's /proc link: no read right needed (an execute-only set-id binary).
    a = _file(tmp_path / "a", 0o4111)
    sweep(tmp_path)
    assert _mode(a) == 0o111


def test_a_link_is_never_followed_out(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    host = _file(out / "host", 0o4755)
    (ws / "ln").symlink_to(host)
    (ws / "dir").symlink_to(out, target_is_directory=True)
    assert sweep(ws) == []
    assert _mode(host) == 0o4755


def test_a_hard_link_to_a_set_id_file_loses_its_workspace_name(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    host = _file(out / "host", 0o4755)
    os.link(host, ws / "hl")
    found = sweep(ws)
    assert [f.action for f in found] == ["removed (a hard link)"]
    assert not (ws / "hl").exists() and _mode(host) == 0o4755


def test_a_fifo_or_a_directory_with_set_group_id_is_left_alone(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o2775)  # a set-group-ID folder only sets the group of what is made in it
    assert sweep(tmp_path) == []
    assert _mode(d) & SETID_BITS == stat.S_ISGID


def test_a_granted_writable_path_is_swept_and_named_in_full(tmp_path: Path) -> None:
    ws, extra = tmp_path / "ws", tmp_path / "cache"
    _file(ws / "a", 0o4755)
    _file(extra / "b", 0o4755)
    found = sweep_all([ws, extra])
    assert [f.rel for f in found] == ["a", str(extra / "b")]


def test_the_model_reads_one_line_and_the_notes_hold_it(tmp_path: Path) -> None:
    _file(tmp_path / "a", 0o4755)
    result = CommandResult(exit_code=0, output="built\n")
    _sweep_setid(result, tmp_path, CommandSpec("true", tmp_path, grant=Grant()))
    assert len(result.notes) == 1 and result.notes[0] in result.output
    assert result.output.startswith("built\n") and len(result.output.splitlines()) == 2
    assert "a (cleared)" in result.notes[0]


def test_nothing_found_adds_nothing(tmp_path: Path) -> None:
    _file(tmp_path / "a", 0o755)
    result = CommandResult(exit_code=0, output="ok\n")
    _sweep_setid(result, tmp_path, CommandSpec("true", tmp_path))
    assert result.notes == [] and result.output == "ok\n"


def test_a_long_list_is_cut_in_the_line() -> None:
    from cerveau_tui.sandbox.setid import SetIdFile

    note = setid_note([SetIdFile(f"f{i}", "cleared") for i in range(9)])
    assert "and 4 more" in note and "\n" not in note
