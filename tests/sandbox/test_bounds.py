"""Bounds on what one command can take: /tmp and /dev/shm size (bubblewrap), the process count
(a pids cgroup per command, counted from the host). Found by probing: each RAM tmpfs was as large
as half the machine, and a fork bomb was stopped only by the timeout."""

from __future__ import annotations

import os
import threading
import uuid

import pytest

import cerveau_tui.sandbox.limits as limits
from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.limits import ProcessCap

from .conftest import PY, Box
from .test_escapes import _alive_with_marker, _wait_gone


@pytest.mark.parametrize("where", ["/tmp", "/dev/shm"])
def test_a_ram_tmpfs_is_capped(masked_runner, box: Box, where: str) -> None:
    if masked_runner.backend != "bubblewrap":
        # Landlock has no private /tmp to cap: it must say so instead.
        assert any("/tmp" in g for g in masked_runner.gaps), masked_runner.gaps
        return
    res = masked_runner.run(
        CommandSpec(
            f"dd if=/dev/zero of={where}/big bs=1M count=40 2>&1; echo rc=$?", box.ws, timeout=20
        )
    )  # the runner's cap is 16 MiB
    assert "No space left" in res.output and "rc=0" not in res.output, res.output


def test_dev_itself_is_not_a_writable_ram_disk(bwrap_runner, box: Box) -> None:
    res = bwrap_runner.run(
        CommandSpec("echo x > /dev/big; echo rc=$?; echo ok > /dev/null", box.ws)
    )
    assert "rc=0" not in res.output and res.exit_code == 0, res.output


def _cap_or_skip(runner) -> None:  # type: ignore[no-untyped-def]
    if runner.cap.mode != "cgroup":
        pytest.skip(f"no writable pids cgroup here (mode {runner.cap.mode})")


FORK_LOOP = """
import os, time
n = 0
for _ in range(100):
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
    except OSError:
        break
open("forked", "w").write(str(n))
time.sleep(30)
"""


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def test_a_fork_loop_stays_under_the_process_cap(masked_runner, box: Box) -> None:
    """100 children asked for, 32 tasks allowed: counted from the host while they run, then
    killed from the host. Python, not `sh`: dash exits at its first failed fork."""
    _cap_or_skip(masked_runner)
    marker = f"cerveau-forkloop-{uuid.uuid4().hex[:8]}"
    script = f"{marker}.py"
    (box.ws / script).write_text(FORK_LOOP.format(marker=marker))
    counted: list[int] = []

    def count_then_release() -> None:
        for _ in range(200):  # until the loop is done forking (it writes `forked`), bounded
            if (box.ws / "forked").exists():
                break
            threading.Event().wait(0.05)
        pids = _alive_with_marker(script)
        counted.append(len(pids))
        _kill(pids)

    helper = threading.Thread(target=count_then_release)
    helper.start()
    try:
        res = masked_runner.run(CommandSpec(f"{PY} {script}", box.ws, timeout=20))
    finally:
        helper.join()
        masked_runner.kill_background()
        _kill(_wait_gone(script))
    assert not res.timed_out, res.output
    assert counted and 1 < counted[0] <= 32, (counted, res.output)


def test_the_command_cgroup_is_removed_afterwards(bwrap_runner, box: Box) -> None:
    _cap_or_skip(bwrap_runner)
    bwrap_runner.run(CommandSpec("sleep 0.1 & true", box.ws))
    root = bwrap_runner.cap.root
    assert not [p for p in os.listdir(root) if p.startswith(f"cerveau-cmd-{os.getpid()}-")]


def test_without_a_pids_cgroup_as_root_the_cap_is_a_declared_gap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(limits, "_pids_root", lambda: None)
    monkeypatch.setattr(limits.os, "geteuid", lambda: 0)
    assert ProcessCap(64).mode == "none"
    runner = BubblewrapRunner(bwrap="/usr/bin/bwrap")
    assert any("process-count" in g for g in runner.gaps)


def test_an_ordinary_user_falls_back_to_rlimit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "_pids_root", lambda: None)
    monkeypatch.setattr(limits.os, "geteuid", lambda: 1000)
    cap = ProcessCap(64)
    group = cap.new_group()
    assert cap.mode == "rlimit" and cap.gap is None
    assert group.path is None and int(group.wrapper[-1]) >= 64  # what the user runs now + 64


def test_the_rlimit_wrapper_sets_rlimit_nproc(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback's wrapper, run for real: as root the kernel ignores the limit, so this checks
    the limit the command starts with, read by the command itself."""
    import subprocess

    monkeypatch.setattr(limits, "_pids_root", lambda: None)
    monkeypatch.setattr(limits.os, "geteuid", lambda: 1000)
    wrapper = ProcessCap(64).new_group().wrapper
    read = "import resource; print(resource.getrlimit(resource.RLIMIT_NPROC)[0])"
    out = subprocess.run(
        [*wrapper[:-1], "4321", PY, "-c", read], capture_output=True, text=True, timeout=20
    )
    assert out.stdout.strip() == "4321", out.stderr


def test_empty_groups_of_gone_sessions_are_swept(bwrap_runner) -> None:
    _cap_or_skip(bwrap_runner)
    root = bwrap_runner.cap.root
    dead = root / f"{limits.GROUP_PREFIX}999999999-stale"  # above pid_max: never a live pid
    live = root / f"{limits.GROUP_PREFIX}{os.getppid()}-other-session"
    dead.mkdir()
    live.mkdir()
    try:
        ProcessCap(64)
        assert not dead.exists() and live.exists()
    finally:
        for p in (dead, live):
            if p.exists():
                p.rmdir()
