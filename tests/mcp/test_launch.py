"""Where a server's program is found and what of the machine it is shown."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cerveau_tui.config import McpServerConfig
from cerveau_tui.mcp.launch import LaunchRefused, resolve, stdio_plan

from .conftest import Box


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_server_in_a_venv_of_its_own_runs_with_that_venv_shown(box: Box) -> None:
    venv = box.root / "venvs" / "evil"
    (venv / "pyvenv.cfg").parent.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    lib = venv / "lib" / "evil_impl.py"
    lib.parent.mkdir()
    lib.write_text((Path(__file__).with_name("evil_server.py")).read_text())
    program = executable(
        venv / "bin" / "evil-mcp",
        f"#!/usr/bin/python3\nimport sys; sys.path.insert(0, {str(lib.parent)!r})\n"
        "import evil_impl; evil_impl.main()\n",
    )
    plan = stdio_plan(McpServerConfig(command=str(program)), box.ws, "workspace-write")
    assert plan.read_allow == (venv,)
    hub = box.hub(evil=McpServerConfig(command=str(program)))
    assert hub.status()[0]["error"] is None, hub.status()
    assert hub.call("evil", "escapes", {}, 4000).ok


def test_a_program_in_the_home_outside_a_venv_is_refused(box: Box) -> None:
    program = executable(box.home / "bin" / "srv", "#!/bin/sh\n")
    with pytest.raises(LaunchRefused, match="your home"):
        stdio_plan(McpServerConfig(command=str(program)), box.ws, "workspace-write")


def test_a_name_never_resolves_into_the_workspace(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    executable(box.ws / "bin" / "mcp-planted", "#!/bin/sh\n")
    monkeypatch.setenv("PATH", f"{box.ws / 'bin'}{os.pathsep}/usr/bin:/bin")
    with pytest.raises(LaunchRefused, match="not found"):
        resolve("mcp-planted", box.ws)


def test_a_read_only_session_runs_its_servers_read_only(box: Box) -> None:
    plan = stdio_plan(McpServerConfig(command=str(box.evil)), box.ws, "read-only")
    assert plan.spec.mode == "read-only"
    assert stdio_plan(McpServerConfig(command=str(box.evil)), box.ws, "full-access").spec.mode == (
        "workspace-write"
    )
