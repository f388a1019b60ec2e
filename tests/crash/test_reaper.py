"""The pieces that make commands die with the session: the reaper and the parent-death helper."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from cerveau_tui.sandbox.die_exec import ORPHANED
from cerveau_tui.sandbox.none import DIE_EXEC

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


#: A session process as the reaper sees one: it tracks the groups it is given (untracking those
#: after "-"), with "kill" kills its reaper by hand first, says its reaper's pid (both, with
#: "kill") and waits to be killed: its death, not a method, is what closes the reaper's pipe.
SESSION = r"""
import os, signal, sys
from cerveau_tui.sandbox.reaper import Reaper
reaper, said = Reaper(), []
for word in sys.argv[1:]:
    if word == "kill":
        os.kill(reaper.pid, signal.SIGKILL)
        os.waitpid(reaper.pid, 0)
    elif word.startswith("-"):
        reaper.untrack(int(word[1:]))
    else:
        reaper.track(int(word))
    if reaper.pid not in said:
        said.append(reaper.pid)
print(*said, flush=True)
sys.stdin.read()
"""


def session_killed_after(*words: str) -> list[int]:
    """Run SESSION with `words`, SIGKILL it once it has done them; its reapers' pids."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SESSION, *words], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    said = [int(w) for w in proc.stdout.readline().split()]
    proc.kill()
    proc.wait()
    return said


def gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_reaper_killed_by_hand_is_replaced_and_told_every_group_still_held():
    a, b = (f"900.{uuid.uuid4().int % 10**9:09d}" for _ in range(2))
    try:
        reapers = session_killed_after(str(_group(a)), "kill", str(_group(b)))
        assert len(reapers) == 2  # the one killed by hand, and the one that replaced it
        assert wait_until(lambda: not with_marker(a) and not with_marker(b), 10.0)
    finally:
        kill_left(a)
        kill_left(b)


def test_an_untracked_group_is_not_killed_when_the_session_ends():
    kept = f"900.{uuid.uuid4().int % 10**9:09d}"
    pid = _group(kept)
    try:
        # its command finished: the number may belong to someone else later
        (reaper,) = session_killed_after(str(pid), f"-{pid}")
        assert wait_until(lambda: gone(reaper), 10.0)
        assert with_marker(kept)
    finally:
        kill_left(kept)
