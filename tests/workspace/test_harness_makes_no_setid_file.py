"""The harness's own writes never make a set-id file (Boundary IV, "no set-id bit leaves").

The sandbox refuses set-id modes to commands (sandbox/seccomp_filter.py) and sweeps what is left
(sandbox/setid.py); the harness writes outside the sandbox as the person (as root, root's files),
so each of its write paths must not be the way the bits come back: the file tools' atomic write
(an existing file's mode kept), a rewind's restore (a mode read back from a record), the
workspace copy (a mode copied from the source).
"""

from __future__ import annotations

import os
import stat

from cerveau_tui.workspace.io.beneath import write_at
from cerveau_tui.workspace.io.copy_beneath import copy_tree_beneath
from cerveau_tui.workspace.restore.checkpoints import restore
from cerveau_tui.workspace.restore.store import BlobStore

SETID = stat.S_ISUID | stat.S_ISGID


def _mode(p) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def test_a_write_over_a_set_id_file_keeps_its_mode_without_the_bits(tmp_path):
    f = tmp_path / "tool"
    f.write_bytes(b"#!/bin/sh\necho old\n")
    os.chmod(f, 0o6755)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        write_at(fd, "tool", b"#!/bin/sh\necho new\n")
    finally:
        os.close(fd)
    assert f.read_bytes() == b"#!/bin/sh\necho new\n"
    assert _mode(f) == 0o755  # the rest of the mode kept, the set-id bits not


def test_a_restore_never_puts_a_set_id_bit_back(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    store = BlobStore(ws)
    digest = store.put(b"#!/bin/sh\nid\n")
    target = {"bin/run": (digest, stat.S_IFREG | 0o4755), "lib/x": (digest, stat.S_IFREG | 0o2750)}
    done = restore(store, target, {})
    assert sorted(done.written) == ["bin/run", "lib/x"]
    assert _mode(ws / "bin/run") == 0o755
    assert _mode(ws / "lib/x") == 0o750


def test_a_workspace_copy_carries_no_set_id_bit(tmp_path):
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    f = ws / "d" / "run"
    f.write_bytes(b"x")
    os.chmod(f, 0o4711)
    copy_tree_beneath(ws, "copy", skip={"copy"})
    copied = ws / "copy" / "d" / "run"
    assert copied.read_bytes() == b"x"
    assert _mode(copied) & SETID == 0
    assert _mode(copied) & 0o777 == 0o711
