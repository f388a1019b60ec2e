"""Issue 15 item 6 in a real terminal: the app on the embedded stack starts its own llama-server;
closing the terminal (SIGHUP) or SIGTERM must leave no llama-server behind, and SIGTERM must give
the terminal back (the alternate screen left, the shell's next line shown).

Driven in tmux as a person would, like test_tmux_smoke.py; every wait is bounded."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cerveau_tui.stack.paths import stack_paths
from cerveau_tui.stack.provision import ProvisionError, locate
from cerveau_tui.stack.state import live_records

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def until(cond: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.25)
    return cond()


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def embedded_stack() -> None:
    try:
        ready = locate(stack_paths()).ready
    except ProvisionError:
        ready = False
    if not ready:
        msg = "real stack missing; run `python -m cerveau_tui.stack provision`"
        if os.environ.get("CERVEAU_REQUIRE_E2E") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    if shutil.which("tmux") is None:
        pytest.fail("tmux is missing; scripts/setup.sh installs it")


class Terminal:
    def __init__(self, name: str, tmp: Path) -> None:
        self.name, self.tmp = name, tmp

    def screen(self) -> str:
        out = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name],
                             capture_output=True, text=True)  # fmt: skip
        return out.stdout

    def app_pid(self) -> int:
        return int((self.tmp / "app.pid").read_text())


@pytest.fixture
def terminal(embedded_stack: None, tmp_path: Path) -> Iterator[Terminal]:
    name = f"cerveau-lifecycle-{os.getpid()}"
    ws = tmp_path / "ws"
    ws.mkdir()
    app = (
        f"echo \\$\\$ > '{tmp_path}/app.pid'; cd '{ROOT}' && TERM=xterm-256color "
        f"CERVEAU_CONFIG='{tmp_path}/config.toml' exec '{sys.executable}' -m cerveau_tui.cli "
        f"--workspace '{ws}'"
    )
    # The app runs under a shell that outlives it and says so: SIGTERM's test reads that line.
    shell = f'sh -c "{app}"; echo after-the-app; sleep 60'
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "36", shell],
                   check=True)  # fmt: skip
    term = Terminal(name, tmp_path)
    try:
        yield term
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def own_server(app_pid: int) -> int | None:
    for rec in live_records(stack_paths().run_dir):
        if rec.owner_pid == app_pid:
            return rec.pid
    return None


def started(term: Terminal) -> tuple[int, int]:
    assert until(lambda: (term.tmp / "app.pid").is_file(), 30)
    assert until(lambda: "ready" in term.screen(), 240), term.screen()
    app = term.app_pid()
    server = own_server(app)
    assert server is not None and alive(server)
    return app, server


def test_closing_the_terminal_leaves_no_llama_server(terminal: Terminal) -> None:
    app, server = started(terminal)
    subprocess.run(["tmux", "kill-session", "-t", terminal.name], check=True)  # SIGHUP
    assert until(lambda: not alive(server), 60), f"llama-server {server} outlived its terminal"
    assert until(lambda: not alive(app), 30)


def test_sigterm_stops_the_server_and_gives_the_terminal_back(terminal: Terminal) -> None:
    app, server = started(terminal)
    os.kill(app, signal.SIGTERM)
    assert until(lambda: not alive(server), 60), f"llama-server {server} outlived SIGTERM"
    assert until(lambda: "after-the-app" in terminal.screen(), 30), terminal.screen()
    screen = terminal.screen()
    assert "ready" not in screen  # the app's screen is gone: the alternate screen was left
