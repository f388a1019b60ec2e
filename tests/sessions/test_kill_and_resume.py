"""A real `cerveau run` killed with SIGKILL mid-turn, then listed and resumed through the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cerveau_tui.session.resume import CUT_TURN_MESSAGE
from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import write

#: The second reply never comes: the run waits on the model when it is killed.
HANGS_AFTER_A_WRITE = {"responses": [write("a.txt", "a\n"), {"keepalive": 0.05}]}


def _run_until_the_second_request(ws: Path, srv: ScriptedServer) -> None:
    """Killed once the second model request is on the server: everything before it (the tool's
    result among it) was logged by then, on the thread that sends it."""
    url = srv.url
    env = {**os.environ, "CERVEAU_CONFIG": str(ws.parent / f"{ws.name}.no-user-config.toml")}
    cmd = [sys.executable, "-m", "cerveau_tui", "run", "--json", "--workspace", str(ws)]
    proc = subprocess.Popen(
        [*cmd, "--server", url, "write a"], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            ev = json.loads(line)
            if ev["type"] == "iteration_started" and ev["payload"]["iteration"] == 2:
                break
        else:
            raise AssertionError("the run ended before its second round")
        deadline = time.monotonic() + 60
        while len(srv.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(srv.requests) == 2, "the second request never reached the server"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def test_a_run_killed_mid_turn_lists_as_interrupted_and_resumes_with_its_tool_result(
    tmp_path: Path,
) -> None:
    with ScriptedServer(HANGS_AFTER_A_WRITE) as srv:
        _run_until_the_second_request(tmp_path, srv)
    listed = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "sessions", "--workspace", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    (summary,) = json.loads(listed.stdout)
    assert summary["status"] == "interrupted"
    with ScriptedServer({"responses": [{"content": "checked"}]}) as srv:
        code, _, err = run_cli(tmp_path, srv.url, "go on", "--resume", summary["id"])
        messages = srv.requests[0]["messages"]
    assert code == 0, err
    tool = [m["content"] for m in messages if m["role"] == "tool"]
    assert tool == ["created a.txt (1 lines, 2 bytes)"]
    assert [m["content"] for m in messages[-2:]] == [CUT_TURN_MESSAGE, "go on"]
