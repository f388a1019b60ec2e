"""Multi-turn sessions of a copying model, through the real CLI: `cerveau run --json`, then
`cerveau run --json --continue` for each later turn, against the copycat server
(cerveau_tui/testing/copycat.py) on loopback, real bash in a fresh workspace. Shared by
tests/guards/test_guard_stops.py and benchmarks/guard_stops.py.

A pathological session starts with a failing call a guard stops; every later reply of the model
copies the newest tool call it can see. The legitimate sessions are the suite's legitimate
scenarios (tests/scenarios/scripts/08-11) followed by a second turn that reads and answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cerveau_tui.loop.guards.repeats import canonical
from cerveau_tui.testing.copycat import CopycatServer

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "tests" / "scenarios" / "scripts"
COPY = {"copy": "last_call"}
FAILING = ("failed", "guarded")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@dataclass(frozen=True)
class Session:
    name: str
    turns: tuple[str, ...]
    script: list[dict[str, Any]]
    files: dict[str, str] = field(default_factory=dict)
    legit: bool = False


LATER = ("hello", "What did you find? Answer in words.")

PATHOLOGICAL = [
    # The issue's `list_files test_file.txt`: the same answer each time, the repeat guard at 3.
    Session(
        "missing_path",
        ("List test_file.txt and fix the bug it shows.", *LATER),
        [_call("list_files", path="test_file.txt"), *[COPY] * 30],
        {"calc.py": "def add(a, b):\n    return a - b\n"},
    ),
    # A failing command run again as it was: the repeat guard at 3.
    Session(
        "failing_command",
        ("Run the tests.", *LATER),
        [_call("bash", command="python3 test_calc.py"), *[COPY] * 30],
        {"calc.py": "def add(a, b):\n    return a - b\n"},
    ),
    # The breaker's varied attempts at one missing thing, then the copies of the last one.
    Session(
        "missing_dependency",
        ("Left-pad 'hello' to 10 characters with the leftpadx library.", *LATER),
        [
            _call("bash", command='python3 -c "import leftpadx"'),
            _call("bash", command="python3 -m leftpadx --version"),
            _call("bash", command="leftpadx --version"),
            *[COPY] * 30,
        ],
    ),
    # Arguments the tool refuses (the native API does not enforce the schema): never run, so
    # never the repeat guard's; the progress guard stops the turn at 8.
    Session(
        "refused_arguments",
        ("Run the tests.", *LATER),
        [_call("bash", command=""), *[COPY] * 40],
    ),
]


def _legit(stem: str) -> Session:
    doc = json.loads((SCENARIOS / f"{stem}.json").read_text(encoding="utf-8"))
    meta = doc["scenario"]
    second = [_call("list_files", path="."), {"content": "All done, as asked."}]
    return Session(
        stem,
        (meta["task"], "Thanks. Is everything in place?"),
        [*doc["responses"], *second],
        dict(meta.get("files", {})),
        legit=True,
    )


LEGIT = [
    _legit(s)
    for s in ("08_slow_steady_edits", "09_polling", "10_three_shapes", "11_long_investigation")
]


@dataclass
class SessionRun:
    session: Session
    turns: list[list[dict[str, Any]]]  # each turn's events
    requests: list[dict[str, Any]]
    returncodes: list[int]
    stderr: str = ""

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e["payload"] for t in self.turns for e in t if e["type"] == type_]

    @property
    def ended(self) -> list[dict[str, Any]]:
        return self.of("turn_ended")

    @property
    def guards(self) -> list[dict[str, Any]]:
        return self.of("guard_tripped")

    @property
    def folds(self) -> list[dict[str, Any]]:
        return [c for c in self.of("compacted") if c.get("reason") == "guard_stop"]

    def failing_calls(self) -> list[tuple[int, str]]:
        """(turn index, canonical call) of every call of the model that failed or was refused."""
        out = []
        for i, events in enumerate(self.turns):
            calls = {
                e["payload"]["call_id"]: e["payload"]
                for e in events
                if e["type"] == "tool_call" and e["payload"].get("via") != "person"
            }
            for e in events:
                p = e["payload"]
                if (
                    e["type"] == "tool_result"
                    and p.get("status") in FAILING
                    and p["call_id"] in calls
                ):
                    c = calls[p["call_id"]]
                    out.append((i, canonical(c["name"], c.get("arguments") or {})))
        return out

    def identical_failing(self) -> int:
        """Failing calls identical to an earlier failing call of the session."""
        seen: set[str] = set()
        n = 0
        for _, key in self.failing_calls():
            n += key in seen
            seen.add(key)
        return n

    def copied_failures(self) -> int:
        """Failing calls identical to a failing call of an EARLIER turn."""
        n = 0
        calls = self.failing_calls()
        for i, key in calls:
            n += any(j < i and k == key for j, k in calls)
        return n

    def evaluated(self) -> int:
        return sum(int(u.get("prompt_n") or 0) for u in self.of("usage"))

    def first_evaluated(self) -> list[int]:
        """What the server evaluated for each later turn's first request."""
        out = []
        for events in self.turns[1:]:
            usage = [e["payload"] for e in events if e["type"] == "usage"]
            out.append(int(usage[0].get("prompt_n") or 0) if usage else 0)
        return out


def run_session(
    s: Session, workspace: Path, *, repo: Path = REPO, timeout: float = 180.0
) -> SessionRun:
    """Every turn of `s`, the CLI from `repo` (another checkout measures the code before)."""
    workspace.mkdir(parents=True, exist_ok=True)
    for rel, text in s.files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CERVEAU_")}
    env["CERVEAU_CONFIG"] = str(workspace.parent / f"{workspace.name}.no-user-config.toml")
    env["CERVEAU_LIMITS__MAX_ITERATIONS"] = "40"
    env["CERVEAU_DONE__GATE"] = ""  # as the guard scenarios (tests/scenarios/scenario_runner.py)
    env["CERVEAU_BASH_TIMEOUT_S"] = "15"
    env["PYTHONPATH"] = str(repo)
    turns, codes, err = [], [], ""
    with CopycatServer({"responses": s.script}) as srv:
        for i, task in enumerate(s.turns):
            more = ["--continue"] if i else []
            proc = subprocess.run(
                [sys.executable, "-m", "cerveau_tui.cli", "run", "--json", *more]
                + ["--workspace", str(workspace), "--server", srv.url, task],
                cwd=repo,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
            codes.append(proc.returncode)
            err += proc.stderr
            turns.append(
                [json.loads(ln) for ln in proc.stdout.splitlines() if ln.strip().startswith("{")]
            )
        requests = list(srv.requests)
    return SessionRun(s, turns, requests, codes, err)
