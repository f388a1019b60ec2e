"""Managed llama-server start-up on this machine: spawn -> /health 200 -> /props read, and stop.
Prints median and max over N starts of the cached binary with SmolLM2-135M. No assertions.

    .venv/bin/python benchmarks/stack_startup.py [N]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from cerveau_tui.stack.paths import stack_paths
from cerveau_tui.stack.provision import locate, provision
from cerveau_tui.stack.server import ManagedServer


def main(n: int = 5) -> None:
    paths = stack_paths()
    t0 = time.perf_counter()
    provision(paths.root)  # a no-op when ready: that is the figure for a warm machine
    warm_provision = time.perf_counter() - t0
    loc = locate(paths)
    assert loc.binary and loc.model, "run `python -m cerveau_tui.stack provision` first"
    starts, stops = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(n):
            server = ManagedServer(loc.binary, loc.model, n_ctx=8192, log_path=Path(tmp) / "log")
            t0 = time.perf_counter()
            server.start(timeout_s=120)
            starts.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            server.stop()
            stops.append(time.perf_counter() - t0)
    print(f"binary: {loc.binary} ({loc.binary_source}); model: {loc.model.name}")
    print(f"provision() on a warm cache: {warm_provision * 1000:.1f} ms")
    print(
        f"start to healthy+props, n={n}: median {statistics.median(starts):.3f} s, max {max(starts):.3f} s"
    )
    print(
        f"stop (SIGTERM, group gone):  median {statistics.median(stops):.3f} s, max {max(stops):.3f} s"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
