"""The pieces that make commands die with the session: the reaper and the parent-death helper."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

from cerveau_tui.sandbox.die_exec import ORPHANED
from cerveau_tui.sandbox.none import DIE_EXEC
from cerveau_tui.sandbox.reaper import Reaper

from .procs import kill_left, wait_until, with_marker


def _group(marker: str) -> int:
    return subprocess.Popen(["sleep", marker], start_new_session=True).pid


def test_the_helper_refuses_to_run_a_command_whose_session_is_already_gone():
    wrong_parent = 1  # never our pid: as if the session died before the request took effect
    r = subprocess.run(
        [sys.executable, "-I", "-S", str(DIE_EXEC), str(wrong_parent), "--", "/bin/echo", "ran"],
        capture_output=True,
    )
    assert (r.returncode, r.stdout) == (ORPHANED, b"")


def test_the_helper_runs_the_command_under_a_live_session():
    r = subprocess.run(
        [sys.executable, "-I", "-S", str(DIE_EXEC), str(os.getpid()), "--", "/bin/echo", "ran"],
        capture_output=True,
    )
    assert (r.returncode, r.stdout) == (0, b"ran\n")


def test_a_reaper_killed_by_hand_is_replaced_and_told_every_group_still_held():
    a, b = (f"900.{uuid.uuid4().int % 10**9:09d}" for _ in range(2))
    reaper = Reaper()
    try:
        reaper.track(_group(a))
        first = reaper.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        os.waitpid(first, 0)
        reaper.track(_group(b))
        assert reaper.pid not in (None, first)
        assert reaper._proc is not None and reaper._proc.stdin is not None
        reaper._proc.stdin.close()  # what our death does to its pipe
        assert wait_until(lambda: not with_marker(a) and not with_marker(b), 10.0)
    finally:
        kill_left(a)
        kill_left(b)


def test_an_untracked_group_is_not_killed_when_the_session_ends():
    kept = f"900.{uuid.uuid4().int % 10**9:09d}"
    reaper = Reaper()
    pid = _group(kept)
    try:
        reaper.track(pid)
        reaper.untrack(pid)  # its command finished: the number may belong to someone else later
        assert reaper._proc is not None and reaper._proc.stdin is not None
        reaper._proc.stdin.close()
        reaper._proc.wait()
        assert with_marker(kept)
    finally:
        kill_left(kept)
