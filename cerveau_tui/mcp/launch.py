"""How a stdio server is started: its program found by the harness, run through the sandbox.

The program is resolved here, on the host, to an absolute path, and that path is what the
sandbox's shell runs: a name is looked up on the person's PATH without the entries that name a
workspace (host_process.person_path), then beside the harness's own interpreter (a server
installed with `pipx inject cerveau ...` or in the same venv). A name never resolves into the
workspace: a `mcp-server-time` the model wrote there is not the person's server. A path the
person wrote in their own config (or a trusted workspace config) is taken as written.

What the server sees is the command's view (sandbox/view.py): `/usr`, `/opt`, the toolchain
folders, the harness's runtime; a server installed there runs from there. One installed in a
venv elsewhere (`~/.venvs/mcp`, pipx's `~/.local/share/pipx/venvs/NAME`) gets that venv bound
read-only, found from the program's real path (the folder holding `pyvenv.cfg`), and the
interpreter its first line names the same way. A folder that is or holds a home, or the
harness's own files, is never bound: the server is refused with a sentence saying where to
install it instead.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ..config import McpServerConfig
from ..host_process import which
from ..sandbox.command import CommandSpec, Grant
from ..sandbox.netpolicy import ANY_HOST
from ..sandbox.view import control_paths, machine_view, person_homes
from .wire import McpError

#: Levels above a program looked at for the venv that holds it (venv/bin/prog: two).
VENV_DEPTH = 4


class LaunchRefused(McpError):
    pass


@dataclass(frozen=True)
class StdioPlan:
    program: Path  # absolute, as resolved on the host
    read_allow: tuple[Path, ...]  # shown read-only inside besides the view
    spec: CommandSpec


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def resolve(command: str, workspace: Path) -> Path:
    ws = Path(os.path.realpath(workspace))
    if "/" in command:
        p = Path(os.path.expanduser(command))
        if not p.is_absolute():
            # The config applies in every workspace: `./server` would run whatever each
            # repository put there.
            raise LaunchRefused(f"{command!r} is a relative path; give its absolute path")
        return p
    found = which(command)
    if found is not None and _under(Path(os.path.realpath(found)), ws):
        found = None  # a workspace folder on PATH: never the person's server
    if found is None:
        beside = Path(sys.executable).parent / command
        if beside.is_file() and os.access(beside, os.X_OK):
            found = str(beside)
    if found is None:
        raise LaunchRefused(
            f"{command!r} was not found on your PATH (the workspace's folders left out) nor beside "
            "cerveau's Python; give its absolute path in the config"
        )
    return Path(found)


def _venv_root(path: Path) -> Path | None:
    for parent in list(path.parents)[:VENV_DEPTH]:
        if (parent / "pyvenv.cfg").is_file():
            return parent
    return None


def _interpreter(program: Path) -> Path | None:
    """The program a script's `#!` line names (`#!/usr/bin/env python3` names env)."""
    try:
        with open(program, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].split()
    return Path(os.fsdecode(words[0])) if words else None


def _shown_root(path: Path) -> Path:
    """The folder to bind so `path` (a realpath) runs inside: its venv, else its folder."""
    venv = _venv_root(path)
    root = venv or path.parent
    if root == Path("/"):
        raise LaunchRefused(f"{path} lies at the top of the disk; install it in a folder")
    for home in person_homes():
        # A venv holds packages; any other folder of a home may hold the person's files.
        if _under(home, root) or (venv is None and _under(root, home)):
            raise LaunchRefused(
                f"{path} would need {root} shown to the server, and that is in (or holds) your "
                "home folder; install the server in a venv (or under /opt, or with "
                "`uv tool install`)"
            )
    for own in control_paths():
        if _under(own, root) or _under(root, own):
            raise LaunchRefused(
                f"{path} lies with cerveau's own files ({own}); install it elsewhere"
            )
    return root


def visible_roots(program: Path, args: list[str], workspace: Path) -> tuple[Path, ...]:
    """What must be bound read-only for `program` (and its interpreter) to run inside, and the
    files its arguments name by absolute path (`python3 /srv/mcp/server.py`)."""
    view = machine_view()
    ws = Path(os.path.realpath(workspace))
    named = [Path(a) for a in args if os.path.isabs(a) and os.path.isfile(a)]
    out: list[Path] = []
    for p in (program, _interpreter(program), *named):
        if p is None:
            continue
        real = Path(os.path.realpath(p))
        if _under(real, ws) or view.visible(real):
            continue
        if not real.exists():
            raise LaunchRefused(f"{p} does not exist")
        root = _shown_root(real)
        if _under(ws, root):
            raise LaunchRefused(
                f"{p} would need {root} shown to the server, and that holds the workspace; "
                "install the server in a folder of its own"
            )
        if root not in out:
            out.append(root)
    return tuple(out)


def network_grant(hosts: list[str]) -> Grant | None:
    """The server's own network: through the sandbox's proxy, to these hosts only ("*": any)."""
    if not hosts:
        return None
    if any(h.strip() in ("*", ANY_HOST) for h in hosts):
        return Grant(network=True)
    return Grant(network=True, hosts=tuple(h.strip().lower() for h in hosts if h.strip()))


def stdio_plan(config: McpServerConfig, workspace: Path, mode: str) -> StdioPlan:
    """`mode`: the session's sandbox mode (a read-only session's servers write nothing)."""
    program = resolve(config.command, workspace)
    if not program.is_file():
        raise LaunchRefused(f"{program} is not a file")
    spec = CommandSpec(
        shlex.join([str(program), *config.args]),
        workspace=workspace,
        mode="read-only" if mode == "read-only" else "workspace-write",
        grant=network_grant(config.network),
        env=dict(config.env) or None,
    )
    return StdioPlan(program, visible_roots(program, config.args, workspace), spec)
