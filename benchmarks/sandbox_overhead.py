"""Overhead per command of each sandbox backend vs running it bare.

    .venv/bin/python benchmarks/sandbox_overhead.py [N]    # default N=50

Runs `true` N times per backend through the same launcher (run_process: new session, pipe, no
inherited fds) and prints the median wall time, the time added over bare, and the ratio, in one
run. Target: bubblewrap adds under 10 ms. Prints figures only (no assertions: machines are noisy).

Also, in the same run, the construction before the allow-listed view ("whole /": `--ro-bind / /`
and a deny list; Landlock reading all of /) so the view's cost is a ratio, and the live
self-check (`self_check`, which now also writes sysctls back) that start-up waits on.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cerveau_tui.sandbox.bubblewrap as bwmod  # noqa: E402
from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap  # noqa: E402
from cerveau_tui.sandbox.command import CommandSpec  # noqa: E402
from cerveau_tui.sandbox.landlock import LandlockRunner, landlock_abi  # noqa: E402
from cerveau_tui.sandbox.none import NoSandbox  # noqa: E402


class WholeRootBwrap(BubblewrapRunner):
    """The construction before the allow list: / bound read-only whole, homes included."""

    def argv(self, *a, **k):  # type: ignore[no-untyped-def]
        saved = bwmod.bwrap_args, bwmod.view_home_args
        bwmod.bwrap_args = lambda view, size, open_file=None: ["--ro-bind", "/", "/"]
        bwmod.view_home_args = lambda view, size: []
        try:
            return super().argv(*a, **k)
        finally:
            bwmod.bwrap_args, bwmod.view_home_args = saved


class ReadAllLandlock(LandlockRunner):
    """Landlock before the allow list: read on all of / (minus the deny list)."""

    def argv(self, *a, **k):  # type: ignore[no-untyped-def]
        out = super().argv(*a, **k)
        keep: list[str] = []
        skip = False
        for x in out:
            if skip:
                skip = False
                continue
            if x == "--read":
                skip = True
                continue
            keep.append(x)
        return keep


def median_ms(fn: Callable[[], object], n: int) -> float:
    fn()  # warm: page cache, the filter's first build
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    ws = Path(tempfile.mkdtemp(prefix="cerveau-bench-sandbox-", dir="/var/tmp"))
    try:
        results: list[tuple[str, float]] = []
        bare = NoSandbox()
        results.append(
            ("bare (no sandbox)", median_ms(lambda: bare.run(CommandSpec("true", workspace=ws)), n))
        )
        if find_bwrap():
            old = WholeRootBwrap()
            results.append(
                (
                    "bubblewrap, whole / (before)",
                    median_ms(lambda: old.run(CommandSpec("true", workspace=ws)), n),
                )
            )
            bw = BubblewrapRunner()
            results.append(
                (
                    "bubblewrap + seccomp",
                    median_ms(lambda: bw.run(CommandSpec("true", workspace=ws)), n),
                )
            )
        else:
            print("bubblewrap: not installed (apt-get install bubblewrap)")
        if landlock_abi() >= 1:
            oll = ReadAllLandlock()
            results.append(
                (
                    "landlock, read all (before)",
                    median_ms(lambda: oll.run(CommandSpec("true", workspace=ws)), n),
                )
            )
            ll = LandlockRunner()
            results.append(
                (
                    f"landlock ABI {ll.abi} + seccomp",
                    median_ms(lambda: ll.run(CommandSpec("true", workspace=ws)), n),
                )
            )
        else:
            print("landlock: not available in this kernel")
        base = results[0][1]
        print(f"median of {n} `true` runs per backend")
        print(f"{'backend':<28} {'median ms':>10} {'added ms':>10} {'ratio':>7}")
        for name, ms in results:
            print(f"{name:<28} {ms:>10.2f} {ms - base:>10.2f} {ms / base:>6.1f}x")
        from cerveau_tui.sandbox.select import self_check

        checks = []
        for _ in range(5):
            t0 = time.perf_counter()
            status = self_check()
            checks.append((time.perf_counter() - t0) * 1000)
        print(
            f"self-check (start-up, live): median {statistics.median(checks):.0f} ms of 5 "
            f"-> {status.backend}, enforced={status.enforced}, privileged={status.privileged}"
        )
    finally:
        shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    main()
