"""A process group kept for a later kill is killed only if its number still names the group it
was: a leader alive with another start time is someone else's process (the pid was reused)."""

from __future__ import annotations

import subprocess
import time

from cerveau_tui.sandbox.process import kill_group
from cerveau_tui.sandbox.reaper import leader_start


def _leader() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


def test_a_group_whose_leader_started_at_another_time_is_not_killed() -> None:
    proc = _leader()
    try:
        kill_group(proc.pid, started="1")  # the start time of the group once registered
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_the_same_group_is_killed() -> None:
    proc = _leader()
    kill_group(proc.pid, started=leader_start(proc.pid))
    assert proc.wait(timeout=10) == -9


def test_a_group_whose_leader_is_gone_is_still_killed() -> None:
    """The leader exited, its children keep the group (and its number): they are the command's."""
    sh = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo $!"], start_new_session=True, stdout=subprocess.PIPE
    )
    child = int(sh.stdout.readline())  # type: ignore[union-attr]
    started = leader_start(sh.pid)
    sh.wait()
    kill_group(sh.pid, started=started)
    deadline = time.monotonic() + 10
    while leader_start(child) != "-" and time.monotonic() < deadline:
        time.sleep(0.05)  # SIGKILL is delivered, not awaited; the orphan is reaped by init
    assert leader_start(child) == "-"
