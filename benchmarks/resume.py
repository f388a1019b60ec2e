"""Resume a 500-turn session: how long it takes, how much memory it holds, how big the log is.

    .venv/bin/python benchmarks/resume.py [--turns 500] [--dir /tmp/cerveau-bench-resume]

The session is made by the real Engine on the scripted server (each turn: the task, a write_file
call and its result, an answer), so the log holds exactly what a session writes: events,
history messages, restore points, and the compactions a 4k window forces. Then:

- log size, total and per turn;
- read_session (the fold resuming does): median wall time, tracemalloc peak;
- build_session(resume=...) whole (sandbox self-check included) and one turn, in a fresh
  process: wall time and peak RSS, against a fresh session built the same way;
- `cerveau sessions`' summary of the workspace: wall time.

Prints figures; no assertions. The machine is shared and noisy: read magnitudes, not digits.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.bus import Emitter  # noqa: E402
from cerveau_tui.config import load_settings  # noqa: E402
from cerveau_tui.provider.llama import LlamaProvider  # noqa: E402
from cerveau_tui.session import build_session  # noqa: E402
from cerveau_tui.session.listing import list_sessions  # noqa: E402
from cerveau_tui.session.stored import read_session  # noqa: E402
from cerveau_tui.testing.scripted_server import ScriptedServer  # noqa: E402


def script(turns: int) -> dict[str, list[dict[str, object]]]:
    out: list[dict[str, object]] = []
    for i in range(turns):
        body = f"# module {i}\n" + "".join(f"value_{i}_{j} = {j}\n" for j in range(20))
        out.append(
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": f"m{i % 40}.py", "content": body}}
                ]
            }
        )
        out.append({"content": f"Wrote m{i % 40}.py with twenty values (turn {i})."})
    # Spare answers: a compaction's summary request takes an entry, so the script runs long.
    out += [{"content": "spare"}] * (turns // 2 + 50)
    return {"responses": out}


def settings_for(ws: Path):  # type: ignore[no-untyped-def]
    return load_settings(
        ws,
        flags={"turn_close": False},
        environ={},
        user_config=ws.parent / "bench-user.toml",
    )


def make_session(ws: Path, turns: int) -> str:
    t0 = time.perf_counter()
    with ScriptedServer(script(turns)) as srv:
        s = build_session(settings_for(ws), bus=Emitter(), provider=LlamaProvider(srv.url))
        try:
            for i in range(turns):
                s.engine.run(f"write module {i} with twenty values")
            sid = s.bus.session_id
        finally:
            s.close()
    print(f"made a {turns}-turn session in {time.perf_counter() - t0:.1f} s (real engine)")
    return sid


def hwm_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(ws: Path, sid: str) -> dict[str, float]:
    """One session built (resumed when `sid`) and one turn run, in a fresh interpreter: the peak
    RSS is that process's alone."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(ws), sid],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ,
    )
    return json.loads(out.stdout.splitlines()[-1])


def child_main(ws: Path, sid: str) -> None:
    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        t0 = time.perf_counter()
        s = build_session(
            settings_for(ws), bus=Emitter(), provider=LlamaProvider(srv.url), resume=sid or None
        )
        took = time.perf_counter() - t0
        t1 = time.perf_counter()
        s.engine.run("one more")
        turn = time.perf_counter() - t1
        s.close()
    print(json.dumps({"took_ms": took * 1000, "turn_ms": turn * 1000, "hwm_kib": hwm_kib()}))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child_main(Path(sys.argv[2]), sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=500)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/cerveau-bench-resume"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    os.environ["CERVEAU_CONFIG"] = str(args.dir / "config" / "config.toml")
    ws = args.dir / "ws"
    shutil.rmtree(args.dir, ignore_errors=True)
    ws.mkdir(parents=True)
    sid = make_session(ws, args.turns)
    log = ws / ".cerveau" / "sessions" / f"{sid}.jsonl"
    size = log.stat().st_size
    lines = sum(1 for _ in log.open())
    print(f"log: {size / 1e6:.2f} MB, {lines} lines; {size / args.turns / 1024:.1f} KiB per turn")

    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        stored = read_session(ws, sid)
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    stored = read_session(ws, sid)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"read_session: median {statistics.median(times) * 1000:.0f} ms over {args.repeat}; "
        f"tracemalloc peak {peak / 1e6:.1f} MB; {len(stored.history)} messages, "
        f"{len(stored.turns)} turns, transcript {len(stored.transcript())} events, "
        f"window {'yes' if stored.window else 'no'}"
    )
    del stored

    fresh = child(ws, "")
    resumed = child(ws, sid)
    print(
        f"build_session(resume) in a fresh process: {resumed['took_ms']:.0f} ms (sandbox "
        f"self-check included; a fresh session there: {fresh['took_ms']:.0f} ms); peak RSS "
        f"{resumed['hwm_kib'] / 1024:.1f} MiB vs {fresh['hwm_kib'] / 1024:.1f} MiB fresh "
        f"(+{(resumed['hwm_kib'] - fresh['hwm_kib']) / 1024:.1f} MiB); the first resumed turn "
        f"{resumed['turn_ms']:.0f} ms"
    )

    t0 = time.perf_counter()
    listed = list_sessions(ws)
    print(f"list_sessions: {(time.perf_counter() - t0) * 1000:.0f} ms for {len(listed)} session(s)")


if __name__ == "__main__":
    main()
