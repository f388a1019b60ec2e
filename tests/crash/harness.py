"""The kill -9 harness: a headless session on the scripted server, killed at a random point, then
every invariant a crash must keep, checked from outside, through the product's own interfaces.

One run (`crash_once`):
  1. a workspace with `a.txt` (old bytes); the script writes a.txt (new bytes, big enough that a
     kill can land inside the write), runs a slow command and leaves one in the background, writes
     b.txt (new file), runs another slow command, answers;
  2. `cerveau run --json` on it, killed with SIGKILL after a random number of its events plus a
     random delay (seeded), or before its first event;
  3. the invariants: nothing it started is still running (/proc, by marker); every file it wrote
     is absent, its old bytes or its new bytes, never a prefix, and no stray temp file is listed;
     `cerveau sessions --json` lists the session; `cerveau run --resume last "go on"` resumes it,
     the cut turn marked interrupted and the model told so (asserted on the request the scripted
     server received); undo (a rewind of the last turn's code) works or refuses cleanly, and
     leaves the files whole.

A broken invariant raises `Broken` with the seed, so a failing run can be replayed alone.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.session.listing import list_sessions
from cerveau_tui.session.resume import CUT_TURN_MESSAGE
from cerveau_tui.session.rewind import RewindError
from cerveau_tui.session.stored import read_session
from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.tools.base import ToolContext, ToolState
from cerveau_tui.tools.files import ListFiles
from cerveau_tui.workspace.io.beneath import is_torn_temp

from .procs import kill_left, wait_until, with_marker

OLD_A = b"old line\n" * 100
NEW_A = b"new line, longer than the old one\n" * 60  # longer than the old: a prefix is visible
NEW_B = b"b was written\n" * 100
EXPECTED = {"a.txt": (OLD_A, NEW_A), "b.txt": (None, NEW_B)}


class Broken(AssertionError):
    """An invariant a crash must keep did not hold."""


@dataclass
class Run:
    seed: int
    after_events: int  # kill after this many events (-1: before the first)
    delay_s: float
    full_access: bool  # no sandbox (the reaper's case) rather than the machine's backend
    events: list[dict[str, Any]] = field(default_factory=list)
    cut: bool = False  # a turn had started and had not ended when the kill landed
    resumed: bool = False
    undo: str = ""  # "restored" | "refused" | "nothing"


def _script(fg: str, bg: str) -> dict[str, Any]:
    def call(name: str, **args: Any) -> dict[str, Any]:
        return {"tool_calls": [{"name": name, "arguments": args}]}

    return {
        "responses": [
            call("write_file", path="a.txt", content=NEW_A.decode()),
            call("bash", command=f"sleep {bg} >/dev/null 2>&1 & sleep {fg}"),
            call("write_file", path="b.txt", content=NEW_B.decode()),
            call("bash", command=f"sleep {fg}"),
            {"content": "all done"},
        ]
    }


def _markers(seed: int) -> tuple[str, str]:
    # `sleep` takes a fraction: a unique duration is an argv marker nothing else carries.
    uniq = f"{seed % 10**9:09d}{os.getpid() % 1000:03d}"
    return f"0.3{uniq}", f"60.{uniq}"


def _env(ws: Path) -> dict[str, str]:
    """No person's config; bytecode cached outside the tree (three CLI starts a run: compiling
    every module each time cost about a third of the harness's minutes)."""
    return {
        **os.environ,
        "CERVEAU_CONFIG": str(ws.parent / f"{ws.name}-no-user-config.toml"),
        "PYTHONDONTWRITEBYTECODE": "",
        "PYTHONPYCACHEPREFIX": str(ws.parent / "pycache"),
    }


@contextmanager
def _as_the_person(ws: Path) -> Iterator[None]:
    """In this process, the same person as the CLI runs (their config dir, so their key): a
    log's lines sealed by another key are not read back, and the log is foreign."""
    saved = os.environ.get("CERVEAU_CONFIG")
    os.environ["CERVEAU_CONFIG"] = _env(ws)["CERVEAU_CONFIG"]
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("CERVEAU_CONFIG", None)
        else:
            os.environ["CERVEAU_CONFIG"] = saved


def _argv(ws: Path, url: str, task: str, full_access: bool) -> list[str]:
    extra = ["--sandbox", "full-access", "--yes"] if full_access else []
    return [
        sys.executable,
        *("-m", "cerveau_tui", "run", "--json", "--workspace", str(ws), "--server", url),
        *extra,
        task,
    ]


def _kill_at(proc: subprocess.Popen[str], run: Run) -> None:
    """Read events until the chosen one, wait the chosen delay, SIGKILL."""
    assert proc.stdout is not None
    if run.after_events >= 0:
        for line in proc.stdout:
            if line.strip():
                run.events.append(json.loads(line))
            if len(run.events) > run.after_events:
                break
    time.sleep(run.delay_s)
    try:
        os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # it had finished: a run with no cut is a run too
    proc.wait()
    rest = proc.stdout.read()  # what it printed before dying
    run.events += [json.loads(x) for x in rest.splitlines() if x.strip().startswith("{")]


def _check_files(ws: Path, run: Run) -> None:
    for name, (old, new) in EXPECTED.items():
        p = ws / name
        got = p.read_bytes() if p.exists() else None
        if got not in (old, new):
            size = "absent" if got is None else f"{len(got)} bytes"
            raise Broken(f"seed {run.seed}: {name} is neither old nor new ({size})")
    listing = ListFiles().run(ListFiles.Args(), ToolContext(workspace=ws, state=ToolState()))
    listed = set(listing.output.splitlines()) - {"(empty)"}  # what the model is shown
    stray = {x for x in listed if not x.startswith(".cerveau/")} - set(EXPECTED)
    if stray:
        raise Broken(f"seed {run.seed}: stray files listed in the workspace: {sorted(stray)}")
    for dirpath, _, names in os.walk(ws):
        if ".cerveau" in Path(dirpath).parts:
            continue
        for n in names:
            if n not in EXPECTED and not is_torn_temp(n):
                raise Broken(f"seed {run.seed}: unexpected file {dirpath}/{n}")


def _sessions(ws: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "sessions", "--workspace", str(ws), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(ws),
    )
    if out.returncode != 0 or "Traceback" in out.stderr:
        raise Broken(f"cerveau sessions failed: {out.stderr[-500:]}")
    listed = json.loads(out.stdout)
    return listed["sessions"] if isinstance(listed, dict) else listed


def _listed(ws: Path) -> list[str]:
    return [s.id for s in list_sessions(ws)]


def _check_resume(ws: Path, run: Run, session_id: str | None) -> None:
    with ScriptedServer({"responses": [{"content": "went on"}]}) as srv:
        code, events, err = run_cli(
            ws, srv.url, "go on", "--resume", "last", env=_env(ws), timeout=120
        )
        requests = list(srv.requests)
    if "Traceback" in err:
        raise Broken(f"seed {run.seed}: resume crashed: {err[-800:]}")
    if session_id is None:
        if code == 0:
            raise Broken(f"seed {run.seed}: resumed a session that is not listed")
        return  # killed before the session existed: "nothing to resume" is a clean refusal
    if code != 0 or not requests:
        raise Broken(f"seed {run.seed}: resume failed (exit {code}): {err[-500:]}")
    run.resumed = True
    if {e["session_id"] for e in events} != {session_id}:
        raise Broken(f"seed {run.seed}: resume ran under another session id")
    told = any(m.get("content") == CUT_TURN_MESSAGE for m in requests[0]["messages"])
    if run.cut and not told:
        raise Broken(f"seed {run.seed}: the cut turn was resumed but the model was not told")
    with _as_the_person(ws):
        turns = read_session(ws, session_id).turns
    if run.cut and turns[-2].reason != "interrupted":
        raise Broken(f"seed {run.seed}: the cut turn reads {turns[-2].reason!r}, not interrupted")
    if turns[-1].reason is None:
        raise Broken(f"seed {run.seed}: the resumed turn never ended in the log")


def _check_undo(ws: Path, run: Run, session_id: str | None) -> None:
    if session_id is None:
        run.undo = "no session"
        return
    flags = {"sandbox": "full-access"} if run.full_access else {}
    settings = load_settings(
        ws, flags=flags, environ={}, user_config=ws.parent / f"{ws.name}-none.toml"
    )
    with _as_the_person(ws), ScriptedServer({"responses": []}) as srv:
        s = build_session(settings, bus=Emitter(), provider=LlamaProvider(srv.url), resume="")
        try:
            result = s.rewinder.rewind_last_turn()
        except RewindError:  # no turn's point was written, or a change it will not overwrite
            result = None
        finally:
            s.close()
    back = result is not None and (result.restored or result.removed)
    run.undo = "nothing" if result is None else ("restored" if back else "refused")
    _check_files(ws, run)
    if result is not None and "a.txt" in result.restored and (ws / "a.txt").read_bytes() != OLD_A:
        raise Broken(f"seed {run.seed}: undo said a.txt was restored but it is not the old bytes")


def crash_once(root: Path, seed: int, n_events_hint: int = 70) -> Run:
    rng = random.Random(seed)
    run = Run(
        seed,
        after_events=rng.randrange(-1, n_events_hint),  # of ~63 in a whole run
        delay_s=rng.choice([0.0, 0.0, rng.uniform(0, 0.05), rng.uniform(0, 0.4)]),
        full_access=bool(rng.getrandbits(1)),
    )
    ws = root / f"ws-{seed}"
    ws.mkdir(parents=True)
    (ws / "a.txt").write_bytes(OLD_A)
    fg, bg = _markers(seed)
    try:
        with ScriptedServer(_script(fg, bg)) as srv:
            proc = subprocess.Popen(
                _argv(ws, srv.url, "write a and b", run.full_access),
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=_env(ws),
                start_new_session=True,  # not in our group: our kill is the only one
            )
            _kill_at(proc, run)
        if not wait_until(lambda: not with_marker(fg) and not with_marker(bg), 10.0):
            left = with_marker(fg) + with_marker(bg)
            raise Broken(f"seed {seed}: left running after kill -9: {left}")
        _check_files(ws, run)
        seen = {e["session_id"] for e in run.events}
        # The CLI's listing every few runs (it costs a process start), the same listing in
        # process otherwise.
        listed = [s["id"] for s in _sessions(ws)] if seed % 5 == 0 else _listed(ws)
        if not seen <= set(listed) or len(listed) > 1:
            raise Broken(f"seed {seed}: sessions lists {listed}, the run printed {sorted(seen)}")
        session_id = listed[0] if listed else None
        if session_id is not None:
            # What the log kept is what resuming works from: a turn begun and never ended is cut.
            with _as_the_person(ws):
                turns = read_session(ws, session_id).turns
            run.cut = bool(turns) and turns[-1].reason is None
        # Undo first, on the crashed session as it was left (its last turn is the cut one), then
        # the resume through the CLI: what the model is told must survive a session reopened
        # in between.
        _check_undo(ws, run, session_id)
        _check_resume(ws, run, session_id)
        return run
    finally:
        kill_left(fg)
        kill_left(bg)
