"""Runs one pathological-model scenario through the real harness: the scripted server on loopback
and `cerveau run --json` as a subprocess, in a fresh workspace. Shared by the scenario tests and
benchmarks/guards_suite.py.

A scenario file is the scripted server's script (`{"responses": [...]}`) plus a `scenario` block:
the task, the files the workspace starts with, and what is expected (the guards that act, at which
iteration, how the turn ends). `{PORT}` in a bash command is replaced by the LLM server's port.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cerveau_tui.testing.scripted_server import ScriptedServer

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"

#: "Guards off": the same engine with thresholds no run reaches. The truncation, text-call,
#: unknown-tool and port guards have no threshold: they act the same either way.
GUARDS_OFF = {
    "CERVEAU_LIMITS__PROGRESS_STALL_LIMIT": "1000",
    "CERVEAU_LIMITS__BREAKER_THRESHOLD": "1000",
    "CERVEAU_LIMITS__MAX_IDENTICAL_CALLS": "1000",
}


@dataclass
class ScenarioRun:
    name: str
    doc: dict[str, Any]
    events: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    workspace: Path
    returncode: int
    stderr: str = ""
    port: int = 0
    iteration_of_seq: dict[int, int] = field(default_factory=dict)

    @property
    def expect(self) -> dict[str, Any]:
        return self.doc["scenario"]["expect"]

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e["payload"] for e in self.events if e["type"] == type_]

    @property
    def guards(self) -> list[dict[str, Any]]:
        return self.of("guard_tripped")

    @property
    def turn_ended(self) -> dict[str, Any]:
        ended = self.of("turn_ended")
        return ended[-1] if ended else {}

    def tokens_through(self, iteration: int) -> int:
        """Prompt + completion tokens of every model call up to and including `iteration`."""
        total, current = 0, 0
        for e in self.events:
            if e["type"] == "iteration_started":
                current = e["payload"]["iteration"]
            elif e["type"] == "usage" and current <= iteration:
                total += e["payload"].get("prompt_tokens", 0) + e["payload"].get(
                    "completion_tokens", 0
                )
        return total

    @property
    def tokens(self) -> int:
        usage = self.turn_ended.get("usage", {})
        return int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))


def scenario_files() -> list[Path]:
    return sorted(SCRIPTS.glob("*.json"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _substitute(value: Any, port: int) -> Any:
    if isinstance(value, str):
        return value.replace("{PORT}", str(port))
    if isinstance(value, list):
        return [_substitute(v, port) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, port) for k, v in value.items()}
    return value


def run_scenario(
    script: Path, workspace: Path, *, guards: bool = True, timeout: float = 180.0
) -> ScenarioRun:
    raw = json.loads(script.read_text(encoding="utf-8"))
    port = _free_port()
    doc = _substitute(raw, port)
    meta = doc["scenario"]
    workspace.mkdir(parents=True, exist_ok=True)
    for rel, text in meta.get("files", {}).items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CERVEAU_")}
    env["CERVEAU_CONFIG"] = str(workspace.parent / f"{workspace.name}.no-user-config.toml")
    env["CERVEAU_LIMITS__MAX_ITERATIONS"] = "40"
    # The guards' scenarios, written when headless ran no gate unless asked: the gate left
    # undecided, as then (headless, an unset gate is now the detected check; issue 22).
    env["CERVEAU_DONE__GATE"] = ""
    # A scenario's command that blocks (a server run in the foreground) costs this, not 120 s.
    env["CERVEAU_BASH_TIMEOUT_S"] = "15"
    if not guards:
        env.update(GUARDS_OFF)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    with ScriptedServer({"responses": doc["responses"]}, port=port) as srv:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "cerveau_tui.cli",
                "run",
                "--json",
                "--workspace",
                str(workspace),
                "--server",
                srv.url,
                meta["task"],
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        requests = list(srv.requests)
    events = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return ScenarioRun(
        script.stem, doc, events, requests, workspace, proc.returncode, proc.stderr, port
    )
