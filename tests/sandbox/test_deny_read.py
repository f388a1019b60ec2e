"""Secrets outside the workspace on the deny-read list never reach a command, verified from the
host: the bytes are not in the output, and a copy into the workspace is absent or empty.

Found by probing: / was mounted read-only, so `cat ~/.ssh/...`, `~/.npmrc` and /etc/shadow all
came back to the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.protect import maskable

from .conftest import PY, Box, FakeHome


def _leaked(out: str, secret: bytes, copy: Path) -> bool:
    in_copy = copy.is_file() and secret in copy.read_bytes()
    return secret.decode() in out or in_copy


@pytest.mark.parametrize(
    "reader",
    [
        "cat {p}",
        PY + " -c \"print(open('{p}').read())\"",
        "cp {p} stolen",
        "tar cf - -C {d} . | tar xf - -C . 2>&1; cat ./{n} 2>&1; cp -r {d} stolen",
    ],
    ids=["cat", "python", "cp", "tar-whole-folder"],
)
def test_a_denied_folder_does_not_reach_the_command(
    masked_runner, box: Box, fake_home: FakeHome, reader: str
) -> None:
    key = fake_home.home / ".ssh" / "id_ed25519"
    cmd = reader.format(p=key, d=key.parent, n=key.name)
    res = masked_runner.run(CommandSpec(cmd, box.ws, timeout=20))
    assert not _leaked(res.output, fake_home.secret, box.ws / "stolen"), res.output
    assert not _leaked("", fake_home.secret, box.ws / "stolen" / key.name)
    assert not _leaked("", fake_home.secret, box.ws / key.name)


@pytest.mark.parametrize("reader", ["cat {p}", "cp {p} stolen"], ids=["cat", "cp"])
def test_a_denied_file_does_not_reach_the_command(
    masked_runner, box: Box, fake_home: FakeHome, reader: str
) -> None:
    res = masked_runner.run(
        CommandSpec(reader.format(p=fake_home.home / ".npmrc"), box.ws, timeout=20)
    )
    assert not _leaked(res.output, fake_home.secret, box.ws / "stolen"), res.output


def test_a_sibling_of_a_denied_path_stays_readable(
    masked_runner, box: Box, fake_home: FakeHome
) -> None:
    res = masked_runner.run(CommandSpec(f"cat {fake_home.home}/notes.txt", box.ws, timeout=20))
    assert res.exit_code == 0 and "ordinary" in res.output, res.output


def test_etc_shadow_is_unreadable_with_the_default_list(runner, box: Box) -> None:
    # `runner` is built bare: the default deny list applies without any settings.
    shadow = Path("/etc/shadow")
    if not shadow.exists():
        pytest.skip("no /etc/shadow here")
    first = shadow.read_text().splitlines()[0]
    res = runner.run(CommandSpec("cat /etc/shadow; cp /etc/shadow stolen", box.ws, timeout=20))
    assert first not in res.output
    assert not (box.ws / "stolen").exists() or first not in (box.ws / "stolen").read_text()


def test_bubblewrap_hides_the_names_in_a_denied_folder_too(box: Box, fake_home: FakeHome) -> None:
    from .conftest import require_bwrap

    require_bwrap()
    runner = BubblewrapRunner(deny_read=fake_home.denied)
    res = runner.run(CommandSpec(f"ls -A {fake_home.home}/.ssh", box.ws, timeout=20))
    assert "id_ed25519" not in res.output


def test_a_denied_path_holding_the_workspace_is_not_masked(box: Box) -> None:
    # Masking box.root would hide the workspace itself: the command must still see its files.
    (box.ws / "mine.txt").write_text("mine\n")
    assert maskable([box.root], box.ws) == []
    assert maskable([box.ws / "sub"], box.ws) == []


def test_a_denied_path_inside_the_apps_runtime_is_not_masked(box: Box) -> None:
    runtime = box.root / "venv"
    (runtime / "lib").mkdir(parents=True)
    assert maskable([runtime / "lib"], box.ws, keep=[runtime]) == []


def test_a_path_that_does_not_exist_is_not_mounted_over(box: Box) -> None:
    assert maskable([box.root / "absent"], box.ws) == []


def test_bubblewrap_masks_come_after_every_bind(box: Box, fake_home: FakeHome) -> None:
    # A grant of the home (approved for one command) must not uncover the key folder in it.
    from cerveau_tui.sandbox.base import Grant

    runner = BubblewrapRunner(bwrap="/usr/bin/bwrap", deny_read=fake_home.denied)
    argv = runner.argv(CommandSpec("true", box.ws, grant=Grant(extra_writable=(fake_home.home,))))
    ssh = str(fake_home.home / ".ssh")
    i_mask = next(i for i, a in enumerate(argv) if a == "--tmpfs" and argv[i + 1] == ssh)
    i_grant = max(i for i, a in enumerate(argv) if a == "--bind-try")
    assert i_mask > i_grant
