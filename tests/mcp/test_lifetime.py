"""A server is the harness's child: it dies with the session, a kill -9 of the harness included
(checked from the host: the server's own pid, found beneath the launcher)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import Box, descendants

SCRIPT = """
import sys, time
from pathlib import Path
from cerveau_tui.config import McpServerConfig, load_settings
from cerveau_tui.deny_read import deny_read_paths
from cerveau_tui.mcp.hook import runner_factory
from cerveau_tui.mcp.hub import McpHub
from cerveau_tui.sandbox.{module} import {cls} as R
ws = Path(sys.argv[1])
s = load_settings(ws, user_config=ws.parent / "none.toml")
hub = McpHub({{"evil": McpServerConfig(command=sys.argv[2])}}, ws,
             runner_factory(s, R(), deny_read_paths(s.deny_read))).start()
assert hub.status()[0]["error"] is None, hub.status()
print(hub.servers["evil"].pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


def test_a_kill_9_of_the_harness_takes_its_servers_with_it(box: Box) -> None:
    module, cls = (
        ("bubblewrap", "BubblewrapRunner")
        if box.backend == "bubblewrap"
        else ("landlock", "LandlockRunner")
    )
    harness = subprocess.Popen(
        [sys.executable, "-c", SCRIPT.format(module=module, cls=cls), str(box.ws), str(box.evil)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    try:
        assert harness.stdout is not None
        launcher = int(harness.stdout.readline())
        server = [p for p in [launcher, *descendants(launcher)] if b"evil-mcp" in
                  Path(f"/proc/{p}/cmdline").read_bytes()]  # fmt: skip
        assert server, "the server is running beneath its launcher"
        os.kill(harness.pid, signal.SIGKILL)
        harness.wait()
        deadline = time.monotonic() + 30  # an event awaited, not a duration asserted
        while any(_alive(p) for p in server) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in server)
    finally:
        if harness.poll() is None:
            harness.kill()
