"""Command start-up with the network proxy in the path (Boundary IV): what a granted command costs
over one without a grant, per backend.

    .venv/bin/python benchmarks/proxy_startup.py [RUNS]

Runs `true` RUNS times (default 20) through each available enforcing runner, without a grant and
with Grant(network=True, hosts=("example.com",)), interleaved so machine noise falls on both
alike, and prints the median wall time of each and their ratio. With a grant, bubblewrap starts
the bridge (netbridge.py, an isolated Python) before the command and the harness receives its
listener; Landlock opens a loopback listener and stacks a second seccomp filter. One run: figures,
no assertion (a shared machine's timings belong here, not in tests).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.sandbox.base import Grant  # noqa: E402
from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap  # noqa: E402
from cerveau_tui.sandbox.command import CommandSpec  # noqa: E402
from cerveau_tui.sandbox.landlock import LandlockRunner, landlock_abi  # noqa: E402


def timed(runner, ws: Path, grant: Grant | None) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    res = runner.run(CommandSpec("true", workspace=ws, grant=grant, timeout=60))
    if res.exit_code != 0:
        raise SystemExit(f"{runner.backend}: `true` failed: {res.output}")
    return (time.perf_counter() - started) * 1000


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    runners = []
    if find_bwrap():
        runners.append(BubblewrapRunner())
    if landlock_abi() >= 1:
        runners.append(LandlockRunner())
    grant = Grant(network=True, hosts=("example.com",))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        ws = Path(d)
        for runner in runners:
            timed(runner, ws, None)  # warm: the machine view, the filters' cache
            timed(runner, ws, grant)
            plain, granted = [], []
            for _ in range(runs):
                plain.append(timed(runner, ws, None))
                granted.append(timed(runner, ws, grant))
            a, b = statistics.median(plain), statistics.median(granted)
            print(
                f"{runner.backend:10} {runs} runs of `true`: no grant {a:6.1f} ms, "
                f"granted (proxy) {b:6.1f} ms, ratio {b / a:.2f} (+{b - a:.1f} ms)"
            )
            runner.kill_background()


if __name__ == "__main__":
    main()
