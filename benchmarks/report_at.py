"""build_report_at on a plan of 50 steps touching 2,000 files, with a warm fingerprint cache.

    .venv/bin/python benchmarks/report_at.py [--dir /tmp/cerveau-bench-report] [--calls 50]

Target: under 20 ms per call, so the report can be rebuilt after every iteration. The session has
40 steps checkpointed (a few files since changed or deleted), 5 cut short with their files on
disk, 5 pending, and ~2,200 events in all. Prints medians; no assertions.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.bus import Emitter, Recorder  # noqa: E402
from cerveau_tui.plan.report import build_report, build_report_at  # noqa: E402
from cerveau_tui.protocol import Event  # noqa: E402
from cerveau_tui.workspace.fingerprint.digest import hash_bytes  # noqa: E402
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter  # noqa: E402

STEPS = 50
FILES_PER_STEP = 40


def session(root: Path) -> list[Event]:
    bus = Emitter("bench")
    rec = Recorder(bus)
    plan = [
        {
            "id": str(s + 1),
            "title": f"step {s + 1}",
            "files": [f"m{s:02d}/f{i:02d}.py" for i in range(FILES_PER_STEP)],
        }
        for s in range(STEPS)
    ]
    bus.emit("plan_committed", {"source": "tool", "revision": 1, "steps": plan})
    for s, step in enumerate(plan):
        if s >= 45:
            continue  # pending: nothing written
        bus.emit("plan_updated", {"step_id": step["id"], "status": "in_progress"})
        hashes = {}
        for rel in step["files"]:
            data = f"# {rel}\n".encode() * 40
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
            hashes[rel] = hash_bytes(data)
            bus.emit(
                "tool_call", {"call_id": rel, "name": "write_file", "arguments": {"path": rel}}
            )
            bus.emit(
                "tool_result",
                {"call_id": rel, "name": "write_file", "ok": True, "output": "ok", "wrote": [rel]},
            )
        if s < 40:  # 40 steps completed; 41-45 were cut short by a guard
            bus.emit("plan_updated", {"step_id": step["id"], "status": "done"})
            bus.emit("checkpoint", {"step_id": step["id"], "hashes": hashes})
    (root / "m03" / "f00.py").write_text("changed since checkpoint\n")
    (root / "m07" / "f01.py").unlink()
    return rec.events


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/cerveau-bench-report")
    ap.add_argument("--calls", type=int, default=50)
    a = ap.parse_args()
    root = Path(a.dir)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    events = session(root)
    time.sleep(0.2)  # let the files age past the fingerprint's racily-clean window

    fp = Fingerprinter(root)
    t0 = time.perf_counter()
    first = build_report_at(events, root, fp)
    cold = time.perf_counter() - t0

    def timed(fn) -> float:  # type: ignore[no-untyped-def]
        times = []
        for _ in range(a.calls):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return statistics.median(times) * 1000

    hashed = fp.hash_count
    warm = timed(lambda: build_report_at(events, root, fp))
    events_only = timed(lambda: build_report(events))
    counts: dict[str, int] = {}
    for s in first.steps:
        counts[str(s.status)] = counts.get(str(s.status), 0) + 1
    print(
        f"plan: {STEPS} steps x {FILES_PER_STEP} files = {STEPS * FILES_PER_STEP} files, {len(events)} events"
    )
    print(f"statuses: {counts}")
    print(f"first call (cold fingerprint cache, {hashed} files hashed): {cold * 1000:.1f} ms")
    print(
        f"build_report_at, warm cache, median of {a.calls}: {warm:.1f} ms (re-read {fp.hash_count - hashed} files)"
    )
    print(f"  of which build_report (events only): {events_only:.1f} ms")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
