"""Guard stops that teach instead of tempt (issue 24), measured on the copying model: identical
failing calls per session, before and after the fold, and what the fold costs the prompt cache.

    .venv/bin/python benchmarks/guard_stops.py [--repo PATH] [SESSION_SUBSTRING ...]

Each session is 2-3 turns through the real CLI (`cerveau run --json`, then `--continue`) against
the copycat server (cerveau_tui/testing/copycat.py): its first turn makes a call a guard stops,
and every later reply copies the newest tool call the model can see (the behaviour the issue
measured on SmolLM2). `--repo` runs the CLI of another checkout (the code before:
`git worktree add /tmp/h24base <commit>`); the sessions and the model are this checkout's.
The legitimate sessions (the suite's 08-11, then a second turn) must show no guard and no fold.
Tokens are the scripted server's (4 bytes a token); "evaluated" is the server's prompt_n, summed
over the session, and at the first request of each later turn (where a fold is re-read once).
Prints figures only; no assertions.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "guards"))

from copycat_sessions import LEGIT, PATHOLOGICAL, run_session  # noqa: E402


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, default=REPO, help="the checkout whose CLI runs")
    ap.add_argument("picks", nargs="*")
    args = ap.parse_args(argv)
    sessions = [
        s for s in [*PATHOLOGICAL, *LEGIT] if not args.picks or any(p in s.name for p in args.picks)
    ]
    header = ["session", "turns end", "guards", "folds", "failing", "identical", "copied",
              "evaluated", "1st of later turns"]  # fmt: skip
    rows = []
    totals = {"identical": 0, "copied": 0, "false": 0}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cerveau-stops-") as tmp:
        for s in sessions:
            r = run_session(s, Path(tmp) / s.name / "ws", repo=args.repo.resolve())
            ends = ",".join(f"{e['reason']}@{e['iterations']}" for e in r.ended)
            guards = ",".join(f"{g['guard']}@{g['iteration']}" for g in r.guards) or "-"
            rows.append([
                s.name + (" (legit)" if s.legit else ""), ends, guards, str(len(r.folds)),
                str(len(r.failing_calls())), str(r.identical_failing()), str(r.copied_failures()),
                str(r.evaluated()), ",".join(map(str, r.first_evaluated())),
            ])  # fmt: skip
            if s.legit:
                totals["false"] += len(r.guards) + len(r.folds)
            else:
                totals["identical"] += r.identical_failing()
                totals["copied"] += r.copied_failures()
            print(f"  ran {s.name}", file=sys.stderr, flush=True)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    print(f"CLI from {args.repo.resolve()}")
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    print("-" * len(line))
    print(
        f"pathological: {totals['identical']} identical failing calls, {totals['copied']} copied "
        f"from an earlier turn; legitimate: {totals['false']} guard trips or folds "
        f"({time.monotonic() - t0:.0f} s wall)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
