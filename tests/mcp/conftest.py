"""Real MCP servers in the real sandbox. Paths under /var/tmp, not /tmp: the sandbox's /tmp is
private, so a target there would be out of reach for reasons that prove nothing. HOME is a
planted home of the test's own (a secret in it), never the machine's."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cerveau_tui.config import McpServerConfig, load_settings
from cerveau_tui.deny_read import deny_read_paths
from cerveau_tui.mcp.hook import runner_factory
from cerveau_tui.mcp.hub import McpHub
from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap
from cerveau_tui.sandbox.guarded import GuardedRunner
from cerveau_tui.sandbox.landlock import LandlockRunner, landlock_abi

SECRET = "MCP-PROBE-SECRET-51c0ffee"
VENV_BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"
BACKENDS = [
    *(["bubblewrap"] if find_bwrap() else []),
    *(["landlock"] if landlock_abi() >= 4 else []),
]


def server_bin(name: str) -> str:
    """A server from the test extra, installed beside the harness's Python."""
    import sys

    found = Path(sys.executable).parent / name
    if not found.exists():
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return str(found)


@dataclass
class Box:
    root: Path
    ws: Path
    home: Path
    outside: Path
    evil: Path
    backend: str
    hubs: list[McpHub] = field(default_factory=list)

    def hub(self, **servers: McpServerConfig) -> McpHub:
        settings = load_settings(self.ws, user_config=self.root / "no-config.toml")
        runner = BubblewrapRunner() if self.backend == "bubblewrap" else LandlockRunner()
        make = runner_factory(settings, runner, deny_read_paths(settings.deny_read))
        guard = GuardedRunner(runner, workspace=self.ws).bracket  # as the session wires it
        hub = McpHub(servers, self.ws, make, guard=guard).start()
        self.hubs.append(hub)
        return hub


@pytest.fixture(params=BACKENDS)
def box(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Box]:
    root = Path(tempfile.mkdtemp(prefix="cerveau-mcp-", dir="/var/tmp"))
    ws, home, outside, srv = root / "ws", root / "home", root / "outside", root / "srv"
    for d in (ws, home / ".ssh", outside, srv):
        d.mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY----- {SECRET}\n")
    (home / "notes.txt").write_text(f"{SECRET}\n")
    (home / ".bashrc").write_text("# the person's\n")
    evil = srv / "evil-mcp"
    evil.write_text(
        "#!/usr/bin/python3\n" + (Path(__file__).with_name("evil_server.py")).read_text()
    )
    evil.chmod(evil.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("HOME", str(home))
    b = Box(root, ws, home, outside, evil, request.param)
    try:
        yield b
    finally:
        for h in b.hubs:
            h.close()
        shutil.rmtree(root, ignore_errors=True)


def descendants(pid: int) -> list[int]:
    """Every process beneath `pid`, read from the host's /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def server_process(hub: McpHub, name: str, marker: str) -> int:
    """The pid of the server's own process (beneath the sandbox launcher), by its command line."""
    top = hub.servers[name].pid
    assert top is not None
    for pid in [top, *descendants(top)]:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and b"bwrap" not in cmdline.split(b"\0")[0]:
            return pid
    raise AssertionError(f"no process of {name} found beneath {top}")
