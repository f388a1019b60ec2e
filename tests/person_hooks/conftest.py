"""A person's hooks, run for real: the headless CLI (`cerveau run --json`) against the scripted
model server, the person's config written to a file, and what the hooks did checked on the host.

Roots live under /var/tmp, not /tmp: a sandboxed command has a private /tmp, so a marker it wrote
to /tmp/x would be absent on the host whether or not the boundary held."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.testing.scripted_server import ScriptedServer

CERVEAU = str(Path(sys.executable).parent / "cerveau")


@dataclass
class Run:
    proc: subprocess.CompletedProcess[str]
    events: list[dict[str, Any]]
    requests: list[dict[str, Any]] = field(default_factory=list)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e["payload"] for e in self.events if e["type"] == kind]

    def sent(self) -> str:
        """Everything the model server received, as one string."""
        return json.dumps(self.requests, ensure_ascii=False)

    @property
    def ended(self) -> dict[str, Any]:
        return self.of("turn_ended")[-1]


@dataclass
class Place:
    root: Path
    ws: Path
    person: Path  # the person's config dir (outside the workspace)
    out: Path  # where host-side markers would land: outside the workspace, outside /tmp

    def config(self, text: str) -> None:
        (self.person / "config.toml").write_text(text)

    def run(self, responses: list[dict[str, Any]], *flags: str, task: str = "go") -> Run:
        env = {**os.environ, "CERVEAU_CONFIG": str(self.person / "config.toml")}
        with ScriptedServer({"responses": responses}) as srv:
            proc = subprocess.run(
                [CERVEAU, "run", "--json", "--workspace", str(self.ws), "--server", srv.url,
                 *flags, task],
                env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            requests = list(srv.requests)
        events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        return Run(proc, events, requests)


@pytest.fixture
def place() -> Iterator[Place]:
    root = Path(tempfile.mkdtemp(prefix="cerveau-hooks-", dir="/var/tmp"))
    for d in ("ws", "person", "out"):
        (root / d).mkdir()
    yield Place(root, root / "ws", root / "person", root / "out")
    shutil.rmtree(root, ignore_errors=True)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def answer(text: str = "done") -> dict[str, Any]:
    return {"content": text}


def toml_list(argv: list[str]) -> str:
    """argv as a TOML array (JSON strings are valid TOML basic strings)."""
    return json.dumps(argv)


def processes_with(marker: str) -> list[str]:
    """Every process on the machine whose command line holds `marker`, read from /proc."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and pid != str(os.getpid()):
            found.append(f"{pid}: {cmdline}")
    return found
