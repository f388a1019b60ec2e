"""State files of running servers, so another process (`cerveau stack status`, `down`, a second
app) can see and stop what this one started. One JSON file per server under <cache>/run/, named by
pid: two apps each owning a server never overwrite each other's record.

A record names one process by three facts: its pid, its start time (/proc/PID/stat field 22) and
the boot it started in (/proc/sys/kernel/random/boot_id). A pid alone is a number the kernel hands
out again: `down` once killed any process whose program name began with `llama-server`, so a pid
reused by another server (another person's, a test's) died for a record that was not its own. Only
a process matching all three is signalled; a record without them (written before they were kept)
is reported and never acted on.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from cerveau_tui.stack.build import BINARY_NAME
from cerveau_tui.stack.wheel import RUNNER_MODULE


class ServerRecord(BaseModel):
    pid: int
    port: int
    url: str
    model: str
    binary: str
    n_ctx: int
    log: str
    started_at: float
    detached: bool = False  # started by `cerveau stack up`, meant to outlive its starter
    # The app that started it (pid and /proc start time): `stack down` stops a server whose owner
    # is gone, which the owner's watchdog should already have done (watchdog.py).
    owner_pid: int | None = None
    owner_start: str | None = None
    # The server's own identity beside its pid: None in a record written before they were kept.
    start: str | None = None
    boot_id: str | None = None


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22); None when it
    is gone or a zombie. A pid and its start time name one process: a reused pid differs.

    Fields are counted after the LAST ')': the program name (field 2) is the process's own choice
    and may hold spaces and parentheses (`prctl(PR_SET_NAME, "x) R 1 1")`)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        return None if fields[0] == b"Z" else fields[19].decode("ascii")
    except (OSError, IndexError, UnicodeDecodeError):
        return None


def boot_id() -> str | None:
    """This boot's id: start times count from boot, so after a reboot the same pid and start
    time can name another process."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def verified(rec: ServerRecord) -> bool:
    """True when the record carries its process's identity (start time and boot id)."""
    return bool(rec.start and rec.boot_id)


def is_recorded_process(rec: ServerRecord) -> bool:
    """True only while the process the record names runs: same pid, start time and boot, and a
    llama-server. An unverified record is never its process."""
    if not verified(rec) or rec.boot_id != boot_id():
        return False
    return start_time(rec.pid) == rec.start and pid_runs_llama_server(rec.pid)


def owner_gone(rec: ServerRecord) -> bool:
    """True when the app that owns this (non-detached) server has ended. Unknown (a record written
    before owners were recorded) is not gone: only `down --all` stops those."""
    if rec.detached or rec.owner_pid is None:
        return False
    return start_time(rec.owner_pid) != rec.owner_start


def record_path(run_dir: Path, pid: int) -> Path:
    return run_dir / f"server-{pid}.json"


def write_record(run_dir: Path, rec: ServerRecord) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    path = record_path(run_dir, rec.pid)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(rec.model_dump_json(indent=2))
    os.replace(tmp, path)
    return path


def remove_record(run_dir: Path, pid: int) -> None:
    record_path(run_dir, pid).unlink(missing_ok=True)
    # Its API key (keys.py) goes with it: a key file outliving its server names nothing.
    (run_dir / f"server-{pid}.key").unlink(missing_ok=True)


def pid_runs_llama_server(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    args = cmdline.split(b"\0")
    argv0 = args[0].decode(errors="replace")
    # The wheel's server is a Python process running our runner module (wheel.py).
    runner = RUNNER_MODULE.encode() in args
    if not (os.path.basename(argv0).startswith(BINARY_NAME) or runner):
        return False
    try:  # a zombie still has /proc/<pid> but is not serving anything
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@dataclass
class RecordScan:
    live: list[ServerRecord] = field(default_factory=list)
    #: Records without a start time or boot id whose pid runs a llama-server now: it may be
    #: theirs or a reused pid; reported, never signalled (the person stops it by hand).
    unverified: list[ServerRecord] = field(default_factory=list)


def scan_records(run_dir: Path) -> RecordScan:
    """The records whose process still runs, and the unverified ones; stale files (their process
    gone, or a reused pid) are removed on the way."""
    scan = RecordScan()
    if not run_dir.is_dir():
        return scan
    for path in sorted(run_dir.glob("server-*.json")):
        try:
            rec = ServerRecord.model_validate(json.loads(path.read_text()))
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        if is_recorded_process(rec):
            scan.live.append(rec)
        elif not verified(rec) and pid_runs_llama_server(rec.pid):
            scan.unverified.append(rec)
        else:
            remove_record(run_dir, rec.pid)
    # The `stack up` server first: it is the one a user means by "the running server".
    scan.live.sort(key=lambda r: (not r.detached, r.started_at))
    return scan


def live_records(run_dir: Path) -> list[ServerRecord]:
    """Records of servers still running (verified: pid, start time, boot)."""
    return scan_records(run_dir).live


def group_has_live_members(pgid: int) -> bool:
    """Any non-zombie process still in the group. The leader's exit is not the end: a helper it
    forked (a wrapper's child, a stray `sleep`) survives SIGTERM racing the leader's death."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def terminate_group(
    pid: int,
    grace_s: float = 5.0,
    *,
    started: str | None = None,
    alive: Callable[[int], bool] = pid_runs_llama_server,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """SIGTERM the server's process group, SIGKILL it after `grace_s`. True when the leader and
    every member are gone. The server runs in its own session (pgid == pid).

    With `started` (the leader's recorded start time), each signal is sent only while the pid is
    still that process, or no process at all (the leader gone, its group's members left: the
    kernel hands out no pid still in use as a group id). A pid now leading another process means
    the group ended and the number was reused: nothing is sent."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        if started is not None and start_time(pid) not in (None, started):
            return True  # ours is gone; the pid names someone else now
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        deadline = clock() + wait
        while clock() < deadline:
            if not alive(pid) and not group_has_live_members(pid):
                return True
            sleep(0.05)
    return not alive(pid) and not group_has_live_members(pid)
