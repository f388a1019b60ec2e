"""The plan views' cost on the UI thread, before and after the plan ledger (issue 22), in one run.

    .venv/bin/python benchmarks/plan_views.py [--turns 500] [--dir /tmp/cerveau-bench-plan]

A 500-turn session with a 20-step plan, one write per turn. Before, the TUI's PlanFeed kept every
plan-relevant event and ran build_report_at (with its own warm fingerprinter) on the UI thread
after each; now the worker sends the reconciled report and the feed only rebuilds it from the
payload (PlanReport.from_json). Prints the per-turn UI cost of each and their ratio, and what the
worker now pays instead (PlanState.reconciled with the session's warm fingerprinter). No
assertions; a noisy machine moves the figures, not the ratio's order.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.bus import Emitter  # noqa: E402
from cerveau_tui.plan.models import PlanReport  # noqa: E402
from cerveau_tui.plan.report import build_report_at  # noqa: E402
from cerveau_tui.plan.state import PlanState  # noqa: E402
from cerveau_tui.protocol import Event  # noqa: E402
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter  # noqa: E402

STEPS = 20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=500)
    ap.add_argument("--dir", default="/tmp/cerveau-bench-plan")
    a = ap.parse_args()
    root = Path(a.dir)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    bus = Emitter("bench")
    ledger = PlanState(workspace=root, fingerprinter=Fingerprinter(root))
    bus.subscribe(ledger)
    old_events: list[Event] = []  # what the old PlanFeed held
    old_fp = Fingerprinter(root)
    plan = [
        {"id": str(s + 1), "title": f"step {s + 1}", "files": [f"m{s:02d}.py"]}
        for s in range(STEPS)
    ]
    old_events.append(bus.emit("plan_committed", {"source": "tool", "steps": plan}))
    old_ui, new_ui, worker = [], [], []
    for turn in range(a.turns):
        rel = f"m{turn % STEPS:02d}.py"
        (root / rel).write_text(f"# turn {turn}\n")
        ev = bus.emit(
            "tool_result",
            {"call_id": str(turn), "name": "write_file", "ok": True, "output": "", "wrote": [rel]},
        )
        old_events.append(ev.model_copy(update={"payload": {"ok": True, "wrote": [rel]}}))
        t0 = time.perf_counter()
        build_report_at(list(old_events), root, old_fp)  # the old feed, on the UI thread
        t1 = time.perf_counter()
        report = ledger.reconciled()  # the worker, now
        t2 = time.perf_counter()
        wire = report.to_json()
        t3 = time.perf_counter()
        PlanReport.from_json(wire)  # the feed, now
        t4 = time.perf_counter()
        old_ui.append(t1 - t0)
        worker.append(t2 - t1)
        new_ui.append(t4 - t3)
    ms = 1000.0
    before, after = statistics.median(old_ui) * ms, statistics.median(new_ui) * ms
    print(f"{a.turns} turns, {STEPS} steps, one write a turn; medians per turn:")
    print(f"  UI thread before (PlanFeed: build_report_at + hashing): {before:.3f} ms")
    print(f"  UI thread after  (PlanFeed: PlanReport.from_json):      {after:.3f} ms")
    print(f"  ratio before/after: {before / after:.1f}x")
    print(
        f"  worker after (PlanState.reconciled, warm fingerprint):  {statistics.median(worker) * ms:.3f} ms"
    )
    print(
        f"  UI thread total over the session: {sum(old_ui) * ms:.0f} ms before, {sum(new_ui) * ms:.0f} ms after"
    )
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
