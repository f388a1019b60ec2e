"""The boundary probe suite (issue 10): an attacker who controls every byte the model sends,
played by the scripted server through the real `cerveau run --json` CLI; every claim is checked
from the HOST afterwards (files, hashes, a loopback listener, the person's next `git`), never from
what a tool printed.

Outside paths live under /var/tmp, not /tmp: the sandbox's /tmp is private, so a target there
would be out of reach for reasons that prove nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer

SECRET = "PROBE-SECRET-7f3c9a1e"


@dataclass
class Run:
    code: int
    events: list[dict[str, Any]]
    stderr: str
    requests: list[dict[str, Any]]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e["payload"] for e in self.events if e["type"] == kind]

    @property
    def started(self) -> dict[str, Any]:
        return self.of("session_started")[0]

    def results(self) -> list[dict[str, Any]]:
        return self.of("tool_result")


@dataclass
class Box:
    root: Path
    ws: Path
    out: Path
    home: Path
    backend: str
    runs: list[Run] = field(default_factory=list)
    config_at: Path | None = None  # the person's config elsewhere (CERVEAU_CONFIG)

    @property
    def user_config(self) -> Path:
        return self.config_at or self.home / ".config" / "cerveau" / "config.toml"

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CERVEAU_CONFIG": str(self.user_config),
            "CERVEAU_SANDBOX_BACKEND": self.backend,
            "GIT_CONFIG_NOSYSTEM": "1",
        }

    def run(self, *replies: dict[str, Any], task: str = "probe", plain: bool = False) -> Run:
        """`cerveau run --json` with the acceptance flags; `plain`: the person's next plain run,
        with no flags, which is what a planted workspace config would change."""
        script = {"responses": [*replies, {"content": "done."}]}
        flags = () if plain else ("--sandbox", "workspace-write", "--approval", "on-request")
        with ScriptedServer(script) as srv:
            code, events, err = run_cli(self.ws, srv.url, task, *flags, env=self.env(), timeout=180)
            run = Run(code, events, err, list(srv.requests))
        self.runs.append(run)
        return run

    def git(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """The person's next git command, on the host, with their rights."""
        env = {**os.environ, "HOME": str(self.home), "GIT_CONFIG_NOSYSTEM": "1"}
        env.pop("GIT_DIR", None)
        return subprocess.run(
            ["git", *args], cwd=cwd or self.ws, env=env, capture_output=True, text=True, timeout=60
        )

    def leaked(self, needle: str = SECRET) -> list[str]:
        """Every place the secret reached that the model, the server or the log can see."""
        where = []
        for run in self.runs:
            if needle in json.dumps(run.events):
                where.append("events")
            if needle in json.dumps(run.requests):
                where.append("server requests")
        for p in self.ws.rglob("*"):
            if p.is_file() and not p.is_symlink():
                try:
                    if needle in p.read_text(errors="replace"):
                        where.append(str(p.relative_to(self.ws)))
                except OSError:
                    pass
        return where


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def reply(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": list(calls)}


def tree_digest(root: Path) -> str:
    """Names, types, link targets and bytes of everything under root, not following links."""
    h = hashlib.sha256()
    if not os.path.lexists(root):
        return "absent"
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            h.update(str(p.relative_to(root)).encode())
            if p.is_symlink():
                h.update(b"L" + os.readlink(p).encode())
            elif p.is_file():
                h.update(b"F" + p.read_bytes())
    return h.hexdigest()


def available_backends() -> list[str]:
    from cerveau_tui.sandbox.bubblewrap import find_bwrap
    from cerveau_tui.sandbox.landlock import landlock_abi

    out = ["none"]
    if find_bwrap():
        out.insert(0, "bubblewrap")
    if landlock_abi() > 0:
        out.insert(1, "landlock")
    return out


@pytest.fixture(params=available_backends())
def box(request: pytest.FixtureRequest) -> Any:
    root = Path(tempfile.mkdtemp(prefix="cerveau-probe-", dir="/var/tmp"))
    ws, out, home = root / "ws", root / "out", root / "home"
    for d in (ws, out, home / ".ssh", home / ".config" / "cerveau"):
        d.mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(f"-----BEGIN KEY-----\n{SECRET}\n")
    (home / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={SECRET}\n")
    (out / "victim.txt").write_text("the person's file\n")
    (ws / "notes.txt").write_text("hello\n")
    yield Box(root, ws, out, home, request.param)
    shutil.rmtree(root, ignore_errors=True)


def ordinary_user(name: str = "cerveau-probe", home: Path | None = None) -> str | None:
    """An ordinary user for the probes that must hold for people who are not root (`useradd`,
    then `runuser -u`); None when this run cannot make one (not root, no runuser)."""
    import pwd

    if os.geteuid() != 0 or shutil.which("runuser") is None:
        return None
    try:
        pwd.getpwnam(name)
    except KeyError:
        extra = ["-d", str(home)] if home is not None else []
        made = subprocess.run(["useradd", "-M", *extra, "-s", "/bin/sh", name], capture_output=True)
        if made.returncode:
            return None
    return name
