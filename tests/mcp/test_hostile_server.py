"""A server that tries to get out (tests/mcp/evil_server.py), checked from the host: the planted
home's files, a folder outside the workspace, loopback listeners, the server's process."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.config import McpServerConfig
from cerveau_tui.mcp.hub import MAX_RESTARTS
from cerveau_tui.mcp.wire import McpError, McpTimeout
from cerveau_tui.testing.listeners import Listener, Quiet

from .conftest import SECRET, Box, server_process

CAP = 16_000


def evil(box: Box, **kw: object) -> McpServerConfig:
    return McpServerConfig(command=str(box.evil), **kw)  # type: ignore[arg-type]


def test_it_cannot_read_the_home_nor_write_outside_the_workspace(box: Box) -> None:
    hub = box.hub(evil=evil(box))
    out = hub.call("evil", "escape", {"home": str(box.home), "outside": str(box.outside)}, CAP)
    assert SECRET not in out.text  # neither ~/.ssh/id_rsa nor ~/notes.txt reached the model
    assert (box.home / ".bashrc").read_text() == "# the person's\n"
    assert not (box.outside / "escaped.txt").exists()
    assert "'notes.txt'" not in out.text and "'.ssh'" not in out.text  # not even listed


def test_its_network_is_refused_until_granted(box: Box) -> None:
    quiet = Quiet()
    try:
        hub = box.hub(evil=evil(box))
        hub.call("evil", "connect", {"host": "127.0.0.1", "port": quiet.port}, CAP)
        hub.call("evil", "proxied_get", {"url": f"http://127.0.0.1:{quiet.port}/"}, CAP)
        assert not quiet.reached()
    finally:
        quiet.sock.close()


def test_granted_one_host_it_reaches_that_host_only(box: Box) -> None:
    ok, quiet = Listener(), Quiet()
    try:
        hub = box.hub(evil=evil(box, network=[f"127.0.0.1:{ok.port}"]))
        hub.call("evil", "proxied_get", {"url": f"http://127.0.0.1:{ok.port}/granted"}, CAP)
        hub.call("evil", "proxied_get", {"url": f"http://127.0.0.1:{quiet.port}/other"}, CAP)
        hub.call("evil", "connect", {"host": "127.0.0.1", "port": quiet.port}, CAP)
        assert ok.lines == ["GET /granted HTTP/1.1"]  # the control: the grant works
        assert not quiet.reached()
    finally:
        ok.close()
        quiet.sock.close()


def test_a_flood_is_bounded_and_the_server_stopped(box: Box) -> None:
    hub = box.hub(evil=evil(box))
    pid = server_process(hub, "evil", "evil-mcp")
    with pytest.raises(McpError):
        hub.call("evil", "flood", {}, CAP)
    assert _gone(pid)


def test_a_hang_is_timed_out_the_server_stopped_and_started_again(box: Box) -> None:
    hub = box.hub(evil=evil(box, timeout_s=2))
    pid = server_process(hub, "evil", "evil-mcp")
    with pytest.raises(McpTimeout):
        hub.call("evil", "hang", {}, CAP)
    assert _gone(pid)
    again = hub.call("evil", "escapes", {}, CAP)  # the next call starts it again
    assert again.ok and hub.servers["evil"].restarts == 1


def test_restarts_are_bounded(box: Box) -> None:
    hub = box.hub(evil=evil(box, timeout_s=1))
    for _ in range(MAX_RESTARTS + 1):
        with pytest.raises(McpTimeout):
            hub.call("evil", "hang", {}, CAP)
    with pytest.raises(McpError, match="not again"):
        hub.call("evil", "escapes", {}, CAP)


def test_escape_sequences_arrive_shown_not_acted_on(box: Box) -> None:
    out = box.hub(evil=evil(box)).call("evil", "escapes", {}, CAP)
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in out.text
    assert "\\x1b]52;c;" in out.text and "clean?" in out.text


def test_a_huge_result_is_cut_to_the_output_cap(box: Box) -> None:
    out = box.hub(evil=evil(box)).call("evil", "huge", {}, CAP)
    assert out.truncated and len(out.text) < CAP + 200


def test_a_stderr_flood_does_not_stall_it(box: Box) -> None:
    hub = box.hub(evil=evil(box))
    out = hub.call("evil", "stderr_flood", {}, CAP)
    assert out.ok and out.text == "still here"
    assert len(hub.servers["evil"].client.channel.pipes.stderr_tail()) <= 8 * 1024  # type: ignore[union-attr]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return True
    return state == b"Z"


def test_control_the_same_server_unsandboxed_gets_out(box: Box) -> None:
    """The probes above can fail: run on the host, the same server reads the secret and writes
    outside (so their silence inside the sandbox is the sandbox's doing)."""
    from contextlib import ExitStack

    from cerveau_tui.mcp.client import McpClient
    from cerveau_tui.mcp.wire import StdioChannel
    from cerveau_tui.sandbox.served import Served, spawn_served

    served = Served(
        spawn_served([str(box.evil)], cwd=str(box.ws), env={}, pass_fds=()), ExitStack()
    )
    client = McpClient(StdioChannel(served))
    try:
        client.initialize(10)
        args = {"home": str(box.home), "outside": str(box.outside)}
        text = client.call_tool("escape", args, 10)["content"][0]["text"]
    finally:
        client.close()
    assert SECRET in text and (box.outside / "escaped.txt").exists()


def test_the_persons_stop_ends_a_waiting_call_and_keeps_the_server(box: Box) -> None:
    import threading

    from cerveau_tui.mcp.wire import McpCancelled

    hub = box.hub(evil=evil(box, timeout_s=600))
    pid = server_process(hub, "evil", "evil-mcp")
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    with pytest.raises(McpCancelled):
        hub.call("evil", "hang", {}, CAP, stop)  # ends at the stop, not at 600 s
    assert not _gone(pid) and hub.servers["evil"].restarts == 0


def test_a_git_hook_it_plants_is_undone_before_the_person_runs_git(box: Box) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(box.ws)], check=True)
    hook = box.ws / ".git" / "hooks" / "pre-commit"
    out = box.hub(evil=evil(box)).call("evil", "plant_hook", {"ws": str(box.ws)}, CAP)
    assert not hook.exists()  # read-only under bubblewrap; undone by the guard under Landlock
    if "planted" in out.text:
        assert "[harness] this command left code for your next git command" in out.text
