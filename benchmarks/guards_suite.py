"""The pathological-model suite as a table: each scenario with the guards on, then the same engine
with the guards off (thresholds no run reaches), in one run.

    .venv/bin/python benchmarks/guards_suite.py [SCENARIO_SUBSTRING ...]

Each run is the real harness: `cerveau run --json` against the scripted server on loopback, real
bash in a fresh tmp workspace. Tokens are the scripted server's approximation (4 bytes a token),
prompt + completion summed over the turn's model calls. "After" is what was spent AFTER the
iteration at which the first guard acts with the guards on (the same iteration in both runs): for
the scenarios a guard stops (1-3) that is waste; for 4-6 it is the recovery the guard's message
led to. "as expected" compares the guards-on run with the scenario's `expect` block (a legitimate
scenario that trips shows FALSE TRIP). Prints figures only; no assertions.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "scenarios"))

from scenario_runner import ScenarioRun, run_scenario, scenario_files  # noqa: E402


def _first_act(r: ScenarioRun) -> int | None:
    return r.guards[0]["iteration"] if r.guards else None


def _row(name: str, on: ScenarioRun, off: ScenarioRun) -> list[str]:
    act = _first_act(on)
    guards = ", ".join(f"{g['guard']}@{g['iteration']}" for g in on.guards) or "-"
    end_on = f"{on.turn_ended.get('reason', '?')}@{on.turn_ended.get('iterations', '?')}"
    end_off = f"{off.turn_ended.get('reason', '?')}@{off.turn_ended.get('iterations', '?')}"
    if act is None:
        before, w_on, w_off = "-", "-", "-"
        it_w_on = it_w_off = "-"
    else:
        before = str(on.tokens_through(act))
        w_on = str(on.tokens - on.tokens_through(act))
        w_off = str(off.tokens - off.tokens_through(act))
        it_w_on = str(on.turn_ended.get("iterations", act) - act)
        it_w_off = str(off.turn_ended.get("iterations", act) - act)
    want = [(g["guard"], g["iteration"]) for g in on.expect["guards"]]
    got = [(g["guard"], g["iteration"]) for g in on.guards]
    if got == want:
        verdict = "yes"
    elif not want:
        verdict = "FALSE TRIP"
    else:
        verdict = "NO"
    return [name, guards, verdict, before, end_on, it_w_on, w_on, end_off, it_w_off, w_off]


def main(argv: list[str]) -> int:
    picks = [p for p in scenario_files() if not argv or any(a in p.stem for a in argv)]
    header = [
        "scenario",
        "guards acted (on)",
        "as expected",
        "tok before",
        "end (on)",
        "it after",
        "tok after",
        "end (off)",
        "it after",
        "tok after",
    ]
    rows: list[list[str]] = []
    totals = {"on_it": 0, "off_it": 0, "on_tok": 0, "off_tok": 0}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cerveau-guards-") as tmp:
        for script in picks:
            on = run_scenario(script, Path(tmp) / f"{script.stem}-on" / "ws", guards=True)
            off = run_scenario(script, Path(tmp) / f"{script.stem}-off" / "ws", guards=False)
            rows.append(_row(script.stem, on, off))
            totals["on_it"] += int(on.turn_ended.get("iterations", 0))
            totals["off_it"] += int(off.turn_ended.get("iterations", 0))
            totals["on_tok"] += on.tokens
            totals["off_tok"] += off.tokens
            print(f"  ran {script.stem}", file=sys.stderr, flush=True)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    print("guards ON: columns 2-7 | guards OFF (same engine, thresholds 1000): columns 8-10")
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print("-" * len(line))
    print(
        f"all scenarios: guards on {totals['on_it']} iterations / {totals['on_tok']} tokens; "
        f"guards off {totals['off_it']} iterations / {totals['off_tok']} tokens "
        f"({time.monotonic() - t0:.0f} s wall)"
    )
    print(
        "note: truncation, text_tool_call, unknown_tool and port have no threshold and act the same "
        "in both runs; a scripted model cannot listen, so its script after a guard is what a "
        "stubborn model does."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
