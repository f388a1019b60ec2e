"""A harness benchmark of small tasks: a folder each, run through `cerveau run --json`, judged by a
hidden check (benchmarks/tasks/README.md has the format; benchmarks/task_bench.py prints tables).

Why (issue 37): the first-task figures came from one scenario (one bug in `add`), and each new
guard was tuned against it. A person gives many kinds of small task (a bug in a library, a
missing function, a doctest, a rename across imports, a config, a question); a change that wins
on one and loses on the others shows only across all of them. The format is plain so another
harness can run the same tasks: `prompt.txt`, `workspace/`, `check.sh`.

One run: the workspace copied to a fresh folder (with `.venv` holding pytest when it has tests,
as a person's project has its own environment, so the detected gate can run them), one turn of
`cerveau run --json` from a checkout (`repo`: the code before is another checkout), the events
kept as JSONL, then `sh check.sh COPY EVENTS` on a COPY of the workspace (the check may run
what the model wrote; the run's own folder stays as it was left). Exit 0 = passed.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import host_process
from ..loop.guards.lost_rounds import CAUSES, count_lost
from .first_task import REPO, make_venv, run_first_task

TASKS = REPO / "benchmarks" / "tasks"
CHECK_TIMEOUT_S = 60.0
#: The figures of one run, in the order printed (the causes are lost_rounds.CAUSES).
FIGURES = (
    "rounds",
    *CAUSES,
    "lost in all",
    "valid actions",
    "false done",
    "tokens evaluated",
    "wall s",
    "passed",
)


@dataclass(frozen=True)
class Task:
    name: str
    folder: Path

    @property
    def prompt(self) -> str:
        return (self.folder / "prompt.txt").read_text(encoding="utf-8").strip()


def load_tasks(root: Path = TASKS, only: tuple[str, ...] = ()) -> list[Task]:
    """The task folders under `root` (those holding all three parts), by name."""
    out = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        parts = (d / "prompt.txt", d / "workspace", d / "check.sh")
        if all(p.exists() for p in parts) and (not only or d.name in only):
            out.append(Task(d.name, d))
    return out


@dataclass
class TaskRun:
    task: str
    figures: dict[str, float] = field(default_factory=dict)
    ended: list[str] = field(default_factory=list)
    check_output: str = ""
    events: list[list[dict[str, Any]]] = field(default_factory=list)


def prepare(task: Task, into: Path) -> Path:
    """The task's workspace copied to `into/ws`, with `.venv` (pytest) when it holds tests."""
    ws = into / "ws"
    shutil.copytree(task.folder / "workspace", ws)
    if any(ws.rglob("test_*.py")):
        make_venv(ws)
    return ws


def check(task: Task, ws: Path, events_file: Path, scratch: Path) -> tuple[bool, str]:
    """The hidden check on a copy of the workspace (no `.venv`: the check brings its own)."""
    copy = scratch / "check-copy"
    shutil.copytree(ws, copy, ignore=shutil.ignore_patterns(".venv", "__pycache__"))
    try:
        # A plain environment (the system PATH, nothing of ours): the check is the person's.
        argv: list[str | Path] = ["sh", task.folder / "check.sh", copy, events_file]
        proc = host_process.run(argv, timeout=CHECK_TIMEOUT_S, cwd=copy, text=True)
    except host_process.TimeoutExpired:
        return False, f"check timed out after {CHECK_TIMEOUT_S:.0f} s"
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()[-400:]


def figures(turns: list[list[dict[str, Any]]], passed: bool, wall: float) -> dict[str, float]:
    """One run's figures from its events (pure): lost rounds by cause (lost_rounds.py), the
    model's actions that ran ("done"), a false done (a turn that ended `completed`, the model's
    "done", while the hidden check fails), the tokens the server evaluated (prompt tokens not
    from its cache, and those generated: the usage events)."""
    lost = count_lost(turns)
    out: dict[str, float] = {"rounds": lost.rounds, **{c: lost.lost[c] for c in CAUSES}}
    out["lost in all"] = sum(lost.lost.values())
    events = [e for t in turns for e in t]
    model_calls = {
        (e.get("payload") or {}).get("call_id")
        for e in events
        if e.get("type") == "tool_call" and (e.get("payload") or {}).get("via") != "person"
    }
    out["valid actions"] = sum(
        1
        for e in events
        if e.get("type") == "tool_result"
        and (e.get("payload") or {}).get("call_id") in model_calls
        and (e.get("payload") or {}).get("status") == "done"
    )
    out["false done"] = int(not passed and "completed" in lost.ended)
    out["tokens evaluated"] = sum(
        int(p.get("prompt_n") or 0) + int(p.get("predicted_n") or 0)
        for e in events
        if e.get("type") == "usage" and (p := e.get("payload") or {})
    )
    out["wall s"] = round(wall, 1)
    out["passed"] = int(passed)
    return out


def run_task(
    task: Task,
    server_url: str,
    scratch: Path,
    *,
    repo: Path = REPO,
    max_iterations: int = 4,
    max_tokens: int = 256,
    timeout: float = 150.0,
    temperature: float = 0.0,
) -> TaskRun:
    """One task, one turn, judged (see the module docstring). `scratch` is an empty folder."""
    ws = prepare(task, scratch)
    t0 = time.monotonic()
    run = run_first_task(
        ws,
        server_url,
        repo=repo,
        turns=(task.prompt,),
        max_iterations=max_iterations,
        max_tokens=max_tokens,
        timeout=timeout,
        temperature=temperature,
    )
    wall = time.monotonic() - t0
    events_file = scratch / "events.jsonl"
    lines = [json.dumps(e) for t in run.turns for e in t]
    events_file.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    passed, said = check(task, ws, events_file, scratch)
    out = TaskRun(task.name, figures(run.turns, passed, wall), count_lost(run.turns).ended, said)
    out.events = run.turns
    return out
