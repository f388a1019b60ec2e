"""Real servers from PyPI (mcp-server-time, -git, -fetch) started inside the sandbox; every
claim checked from the host: the server's namespaces, a loopback listener's request lines."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cerveau_tui.config import McpServerConfig
from cerveau_tui.testing.listeners import Listener, Quiet

from .conftest import Box, server_bin, server_process

NAMESPACES = ("pid", "net", "mnt", "user", "ipc", "uts")


def test_the_time_server_answers_from_inside_the_sandboxs_namespaces(box: Box) -> None:
    if box.backend != "bubblewrap":
        pytest.skip("namespaces are bubblewrap's; Landlock confines in the host's")
    hub = box.hub(time=McpServerConfig(command=server_bin("mcp-server-time")))
    out = hub.call("time", "get_current_time", {"timezone": "Europe/Paris"}, 16_000)
    assert out.ok and '"timezone": "Europe/Paris"' in out.text
    pid = server_process(hub, "time", "mcp-server-time")
    for ns in NAMESPACES:
        assert os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}"), ns


def test_the_time_server_lists_its_two_tools(box: Box) -> None:
    hub = box.hub(time=McpServerConfig(command=server_bin("mcp-server-time")))
    assert [t.name for _, t in hub.catalogue()] == ["get_current_time", "convert_time"]


def test_the_git_server_reads_the_workspace_repository(box: Box) -> None:
    subprocess.run(["git", "init", "-q", str(box.ws)], check=True)
    (box.ws / "hello.txt").write_text("hi\n")
    hub = box.hub(
        git=McpServerConfig(
            command=server_bin("mcp-server-git"), args=["--repository", str(box.ws)]
        )
    )
    assert hub.status()[0]["error"] is None, hub.status()
    out = hub.call("git", "git_status", {"repo_path": str(box.ws)}, 16_000)
    assert out.ok and "hello.txt" in out.text, out.text


def fetch_server(network: list[str]) -> McpServerConfig:
    return McpServerConfig(
        command=server_bin("mcp-server-fetch"),
        args=["--ignore-robots-txt", "--allow-private-ips"],
        network=network,
        timeout_s=30,
    )


def test_the_fetch_server_has_no_network_until_granted(box: Box) -> None:
    page = Listener()
    try:
        hub = box.hub(fetch=fetch_server([]))
        out = hub.call(
            "fetch", "fetch", {"url": f"http://127.0.0.1:{page.port}/page", "raw": True}, 16_000
        )
        assert page.lines == []  # the host's listener saw nothing
        assert not out.ok
    finally:
        page.close()


def test_the_fetch_server_granted_one_host_reaches_it_and_no_other(box: Box) -> None:
    page, other = Listener(), Quiet()
    try:
        hub = box.hub(fetch=fetch_server([f"127.0.0.1:{page.port}"]))
        out = hub.call(
            "fetch", "fetch", {"url": f"http://127.0.0.1:{page.port}/page", "raw": True}, 16_000
        )
        assert page.lines == ["GET /page HTTP/1.1"], out.text
        assert "ok" in out.text
        hub.call("fetch", "fetch", {"url": f"http://127.0.0.1:{other.port}/x", "raw": True}, 16_000)
        assert not other.reached()
    finally:
        page.close()
        other.sock.close()


def test_a_server_dies_with_the_hub(box: Box) -> None:
    hub = box.hub(time=McpServerConfig(command=server_bin("mcp-server-time")))
    pid = server_process(hub, "time", "mcp-server-time")
    hub.close()
    assert not Path(f"/proc/{pid}").exists() or _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True
