"""The harness's own state (`.cerveau/`) is read-only to commands under bubblewrap, verified from
the host by hashing the folder before and after.

Found by probing: with no `.cerveau/config.toml` yet a command created one saying
`sandbox = "full-access"`, and with one present `mv .cerveau .cerveau.old` plus a new folder did
the same; `.cerveau/sessions` could be replaced by a link."""

from __future__ import annotations

import hashlib
import os
import stat
import uuid
from pathlib import Path

import pytest

from cerveau_tui.sandbox.base import Grant
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.protect import StateDirRefused, ensure_state_dir, keep_out_of_git

from .conftest import Box


def tree_digest(root: Path) -> str:
    """Names, kinds, link targets and contents beneath root, as one hash (lstat: never follows)."""
    h = hashlib.sha256()
    if not os.path.lexists(root):
        return "absent"
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted([*dirnames, *filenames]):
            p = Path(dirpath, name)
            st = os.lstat(p)
            h.update(f"{p.relative_to(root)}|{stat.S_IFMT(st.st_mode)}".encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p).encode())
            elif stat.S_ISREG(st.st_mode):
                h.update(p.read_bytes())
    h.update(str(stat.S_IFMT(os.lstat(root).st_mode)).encode())
    return h.hexdigest()


@pytest.fixture
def state(box: Box) -> Path:
    cerveau = box.ws / ".cerveau"
    (cerveau / "sessions").mkdir(parents=True)
    (cerveau / "sessions" / "s1.jsonl").write_text('{"type": "session_started"}\n')
    (cerveau / "blobs").mkdir()
    (cerveau / "config.toml").write_text('sandbox = "workspace-write"\n')
    keep_out_of_git(box.ws)  # what the runner writes before a command: not the attack's doing
    return cerveau


ATTACKS = {
    "overwrite-config": "echo 'sandbox = \"full-access\"' > .cerveau/config.toml",
    "move-the-folder-away": "mv .cerveau .cerveau.old && mkdir .cerveau && echo 'sandbox = \"full-access\"' > .cerveau/config.toml",
    "remove-it": "rm -rf .cerveau",
    "sessions-replaced-by-a-link": "rm -rf .cerveau/sessions; ln -s /etc .cerveau/sessions",
    "blobs-replaced-by-a-link": "mv .cerveau/blobs b; ln -s /var/tmp .cerveau/blobs",
    "new-file-beside": "echo x > .cerveau/memory.md",
}


@pytest.mark.parametrize("attack", list(ATTACKS), ids=list(ATTACKS))
def test_commands_cannot_change_the_state_folder(
    bwrap_runner, box: Box, state: Path, attack: str
) -> None:
    before = tree_digest(state)
    bwrap_runner.run(CommandSpec(ATTACKS[attack], box.ws, timeout=20))
    assert tree_digest(state) == before
    assert not (box.ws / ".cerveau.old").exists()


def test_with_no_state_folder_yet_a_command_cannot_create_the_config(
    bwrap_runner, box: Box
) -> None:
    assert not (box.ws / ".cerveau").exists()
    bwrap_runner.run(
        CommandSpec(
            "mkdir -p .cerveau && echo 'sandbox = \"full-access\"' > .cerveau/config.toml",
            box.ws,
            timeout=20,
        )
    )
    assert (box.ws / ".cerveau").is_dir() and not (box.ws / ".cerveau").is_symlink()
    assert os.listdir(box.ws / ".cerveau") == [".gitignore"]  # the harness's, not the command's


def test_the_state_folder_is_read_only_in_read_only_mode_too(
    bwrap_runner, box: Box, state: Path
) -> None:
    before = tree_digest(state)
    bwrap_runner.run(
        CommandSpec(
            "echo x > .cerveau/config.toml",
            box.ws,
            mode="read-only",
            grant=Grant(extra_writable=(box.ws,)),
            timeout=20,
        )
    )
    assert tree_digest(state) == before


def test_a_state_folder_that_is_a_link_is_refused_and_the_command_not_run(runner, box: Box) -> None:
    (box.ws / ".cerveau").symlink_to(box.outside)
    marker = f"ran-{uuid.uuid4().hex[:6]}"
    res = runner.run(CommandSpec(f"echo x > {marker}", box.ws, timeout=20))
    assert res.exit_code == 126 and "refused" in res.output
    assert not (box.ws / marker).exists()
    assert (box.ws / ".cerveau").is_symlink()  # left for the person to see, not tidied away


def test_a_state_folder_that_is_a_file_is_refused(box: Box) -> None:
    (box.ws / ".cerveau").write_text("not a folder\n")
    with pytest.raises(StateDirRefused, match="not a directory"):
        ensure_state_dir(box.ws)


def test_full_access_does_not_create_the_state_folder(bwrap_runner, box: Box) -> None:
    # full-access is "no boundary" by the person's choice: nothing to bind, nothing made.
    bwrap_runner.run(CommandSpec("true", box.ws, mode="full-access", timeout=20))
    assert not (box.ws / ".cerveau").exists()
