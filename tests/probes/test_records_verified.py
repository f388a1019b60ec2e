"""Records are verified, not trusted (issue 20). A server record names a process by its pid, its
start time and the boot: `cerveau stack down` once killed whatever held a recorded pid under a
`llama-server` name, so a reused pid died. Checked from the host: real processes, alive or not
after the real CLI ran."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cerveau_tui.stack.paths import stack_paths
from cerveau_tui.stack.state import (
    ServerRecord,
    boot_id,
    start_time,
    terminate_group,
    write_record,
)

CERVEAU = str(Path(sys.executable).parent / "cerveau")


def _alive(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None


@pytest.fixture
def server_like(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real process under llama-server's program name (a copy of `sleep`), leading its own
    group as a managed server does: everything a name check believes."""
    fake = tmp_path / "llama-server"
    shutil.copy("/bin/sleep", fake)
    proc = subprocess.Popen([str(fake), "300"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def _record(tmp_path: Path, pid: int, **identity: str | None) -> None:
    rec = ServerRecord(
        pid=pid, port=1, url="http://127.0.0.1:1", model="m", binary="llama-server", n_ctx=1,
        log="l", started_at=0.0, detached=True, **identity,
    )  # fmt: skip
    write_record(stack_paths(tmp_path / "cache").run_dir, rec)


def _down(tmp_path: Path) -> dict[str, list[int]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CERVEAU_")}
    env.update(CERVEAU_CACHE_DIR=str(tmp_path / "cache"), CERVEAU_CONFIG=str(tmp_path / "c.toml"))
    proc = subprocess.run(
        [CERVEAU, "stack", "down", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def test_stack_down_leaves_alive_a_pid_whose_start_time_differs(
    tmp_path: Path, server_like: subprocess.Popen[bytes]
) -> None:
    # The record's process ended and the kernel gave its pid to this one: same number, same
    # program name, a later start.
    real = start_time(server_like.pid)
    assert real is not None
    _record(tmp_path, server_like.pid, start=str(int(real) - 1), boot_id=boot_id())
    assert _down(tmp_path)["stopped"] == []
    assert _alive(server_like)


def test_stack_down_stops_the_process_its_record_names(
    tmp_path: Path, server_like: subprocess.Popen[bytes]
) -> None:
    _record(tmp_path, server_like.pid, start=start_time(server_like.pid), boot_id=boot_id())
    assert _down(tmp_path)["stopped"] == [server_like.pid]
    server_like.wait(timeout=30)
    assert not _alive(server_like)


def test_stack_down_leaves_alive_a_record_from_another_boot(
    tmp_path: Path, server_like: subprocess.Popen[bytes]
) -> None:
    # Start times count from boot: after a reboot the same pid and ticks can be another process.
    other_boot = "00000000-0000-4000-8000-000000000000"
    assert boot_id() not in (None, other_boot)
    _record(tmp_path, server_like.pid, start=start_time(server_like.pid), boot_id=other_boot)
    assert _down(tmp_path)["stopped"] == []
    assert _alive(server_like)


def test_an_old_record_without_its_identity_is_reported_and_not_killed(
    tmp_path: Path, server_like: subprocess.Popen[bytes]
) -> None:
    _record(tmp_path, server_like.pid)  # written before records kept a start time and boot id
    out = _down(tmp_path)
    assert (out["stopped"], out["unverified"]) == ([], [server_like.pid])
    assert _alive(server_like)


def test_stack_status_does_not_take_an_unmatched_record_for_the_running_server(
    tmp_path: Path, server_like: subprocess.Popen[bytes]
) -> None:
    real = start_time(server_like.pid)
    assert real is not None
    _record(tmp_path, server_like.pid, start=str(int(real) + 7), boot_id=boot_id())
    env = {k: v for k, v in os.environ.items() if not k.startswith("CERVEAU_")}
    env.update(CERVEAU_CACHE_DIR=str(tmp_path / "cache"), CERVEAU_CONFIG=str(tmp_path / "c.toml"))
    proc = subprocess.run(
        [CERVEAU, "stack", "status", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["servers"] == []


def test_a_group_is_not_signalled_once_its_leaders_pid_names_another_process(
    server_like: subprocess.Popen[bytes],
) -> None:
    # What the watchdog does at the app's end: the start time it was given is not this one's.
    real = start_time(server_like.pid)
    assert real is not None
    assert terminate_group(server_like.pid, 0.1, started=str(int(real) - 1))
    assert _alive(server_like)


def test_the_start_time_is_read_after_the_last_parenthesis_of_the_program_name(
    tmp_path: Path,
) -> None:
    # The program name is the process's own choice: one holding ") Z 1 2 (" would shift every
    # field a parser counts from the first ')'.
    name = "x) Z 1 2 (y"
    fake = tmp_path / name
    shutil.copy("/bin/sleep", fake)
    proc = subprocess.Popen([str(fake), "300"])
    try:
        raw = Path(f"/proc/{proc.pid}/stat").read_text()
        prefix = f"{proc.pid} ({name}) "
        assert raw.startswith(prefix)
        assert start_time(proc.pid) == raw[len(prefix) :].split()[19]
    finally:
        proc.kill()
        proc.wait()


def _reaper_ends_holding(line: str) -> None:
    from cerveau_tui.sandbox.reaper import REAPER_SCRIPT

    reaper = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", REAPER_SCRIPT], stdin=subprocess.PIPE
    )
    assert reaper.stdin is not None
    reaper.stdin.write(line.encode())
    reaper.stdin.close()  # the session ended: the reaper kills what it holds
    assert reaper.wait(timeout=30) == 0


def test_the_reaper_leaves_alone_a_group_number_that_another_process_now_leads(
    server_like: subprocess.Popen[bytes],
) -> None:
    real = start_time(server_like.pid)
    assert real is not None
    _reaper_ends_holding(f"+{server_like.pid} {int(real) - 1}\n")
    assert _alive(server_like)


def test_the_reaper_kills_the_group_it_was_given(server_like: subprocess.Popen[bytes]) -> None:
    _reaper_ends_holding(f"+{server_like.pid} {start_time(server_like.pid)}\n")
    server_like.wait(timeout=30)
    assert not _alive(server_like)
