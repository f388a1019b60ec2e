"""Issue 15 item 6: the server an app started dies with the app, however the app ends. The app
here is a child Python that starts a ManagedServer and is then killed with SIGKILL (no atexit, no
signal handler runs): the watchdog alone must stop the server's whole group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cerveau_tui.stack.state import start_time

from .fakes import fake_http_server, pid_gone

APP = """
import sys
from pathlib import Path
from cerveau_tui.stack.server import ManagedServer
server = ManagedServer(Path(sys.argv[1]), Path(sys.argv[2]), n_ctx=2048, log_path=Path(sys.argv[3]))
server.start(timeout_s=120)
print(server.pid, flush=True)
sys.stdin.read()
"""


def gone_within(pids: list[int], seconds: float) -> bool:
    # Bounded wait for the kernel and the watchdog to act; the elapsed time is not asserted.
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(pid_gone(p) for p in pids):
            return True
        time.sleep(0.05)
    return all(pid_gone(p) for p in pids)


def start_app(binary: Path, model: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    app = subprocess.Popen(
        [sys.executable, "-c", APP, str(binary), str(model), str(tmp_path / "log")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert app.stdout is not None
    return app, int(app.stdout.readline())


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
def test_the_apps_server_and_its_helpers_die_when_the_app_is_killed(tmp_path: Path, sig) -> None:
    pidfile = tmp_path / "child.pid"
    binary = fake_http_server(tmp_path / "llama-server", pidfile)
    app, server_pid = start_app(binary, tmp_path / "m.gguf", tmp_path)
    helper = int(pidfile.read_text())
    assert not pid_gone(server_pid) and not pid_gone(helper)
    app.send_signal(sig)
    app.wait(timeout=30)
    try:
        assert gone_within([server_pid, helper], 30)
    finally:
        for pid in (server_pid, helper):
            if not pid_gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_real_llama_server_dies_with_a_sigkilled_app(
    real_parts: tuple[Path, Path], tmp_path: Path
) -> None:
    binary, model = real_parts
    app, server_pid = start_app(binary, model, tmp_path)
    app.kill()
    app.wait(timeout=30)
    try:
        assert gone_within([server_pid], 30)
    finally:
        if not pid_gone(server_pid):
            os.killpg(server_pid, signal.SIGKILL)


def test_start_time_names_one_process() -> None:
    assert start_time(os.getpid()) is not None
    assert start_time(2**22 + 1) is None  # above pid_max: no such process
