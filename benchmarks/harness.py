"""Issue 2 benchmarks. Prints figures; asserts nothing.

(a) Harness overhead per iteration on the scripted server: everything but the model call, median
    and p95 over 200 iterations (the provider call is timed and subtracted).
(b) On the real stack (`--real URL`, or the managed default when omitted with --real-managed):
    generation tokens/s and prompt-cache reuse cache_n / (cache_n + prompt_n) per iteration.

    .venv/bin/python benchmarks/harness.py             # (a)
    .venv/bin/python benchmarks/harness.py --real URL  # (a) and (b)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


class Timed:
    """Wraps a provider and records how long each model call took."""

    def __init__(self, inner: LlamaProvider) -> None:
        self.inner = inner
        self.base_url = inner.base_url
        self.durations: list[float] = []
        self.iteration = 0

    def complete(self, *a, **k):
        t = time.perf_counter()
        try:
            return self.inner.complete(*a, **k)
        finally:
            while len(self.durations) < self.iteration:
                self.durations.append(0.0)
            self.durations[self.iteration - 1] += time.perf_counter() - t

    def __getattr__(self, name):
        return getattr(self.inner, name)


def overhead(n: int = 200) -> None:
    script = {
        "responses": [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": f"f{i % 20}.txt", "content": f"v{i}\n"},
                    }
                ]
            }
            for i in range(n)
        ]
        + [{"content": "done"}]
    }
    with tempfile.TemporaryDirectory() as ws, ScriptedServer(script) as srv:
        env = {"CERVEAU_LIMITS__MAX_ITERATIONS": str(n + 5)}
        settings = load_settings(ws, environ=env, user_config=Path(ws) / "none.toml")
        bus = Emitter()
        rec = Recorder(bus)
        provider = Timed(LlamaProvider(srv.url))
        session = build_session(settings, bus=bus, provider=provider)
        starts: list[float] = []

        def on_event(e):
            if e.type == "iteration_started":
                starts.append(time.perf_counter())
                provider.iteration = e.payload["iteration"]

        bus.subscribe(on_event)
        t0 = time.perf_counter()
        out = session.engine.run("benchmark")
        total = time.perf_counter() - t0
        session.close()
    iters = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    model = provider.durations[: len(iters)]
    over = sorted((i - m) * 1000 for i, m in zip(iters, model, strict=False))
    p95 = over[int(len(over) * 0.95) - 1]
    print(
        f"(a) harness overhead per iteration over {len(over)} iterations (turn ended: {out.reason}, {len(rec.events)} events, {total:.2f} s):"
    )
    print(
        f"    median {statistics.median(over):.2f} ms   p95 {p95:.2f} ms   (target: median < 5 ms)"
    )
    print(
        f"    model call (scripted server, loopback) median {statistics.median(model) * 1000:.2f} ms"
    )


def real(url: str) -> None:
    with tempfile.TemporaryDirectory() as ws:
        (Path(ws) / "notes.txt").write_text("alpha\nbeta\n")
        env = {
            "CERVEAU_TEMPERATURE": "0",
            "CERVEAU_LIMITS__MAX_ITERATIONS": "6",
            "CERVEAU_LIMITS__MAX_IDENTICAL_CALLS": "10",
        }
        settings = load_settings(
            ws, flags={"server_url": url}, environ=env, user_config=Path(ws) / "none.toml"
        )
        bus = Emitter()
        rec = Recorder(bus)
        session = build_session(settings, bus=bus)
        session.engine.run("Read notes.txt, then create summary.txt with its first line.")
        session.close()
    usage = [e.payload for e in rec.of("usage")]
    print(f"(b) real stack at {url}: {len(usage)} model calls")
    for i, u in enumerate(usage, 1):
        total = u["cache_n"] + u["prompt_n"]
        reuse = u["cache_n"] / total if total else 0.0
        print(
            f"    iteration {i}: prompt_n={u['prompt_n']:5d} cache_n={u['cache_n']:5d} reuse={reuse:6.1%} "
            f"predicted_n={u['predicted_n']:4d} gen={u['predicted_per_second']:.1f} tok/s"
        )
    later = [u for u in usage[1:] if u["cache_n"] + u["prompt_n"]]
    if later:
        agg = sum(u["cache_n"] for u in later) / sum(u["cache_n"] + u["prompt_n"] for u in later)
        print(f"    cache reuse after the first iteration: {agg:.1%} (target >= 90%)")
    gens = [u["predicted_per_second"] for u in usage if u["predicted_per_second"]]
    if gens:
        print(f"    generation median {statistics.median(gens):.1f} tokens/s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", default=None, help="URL of a running llama-server")
    ap.add_argument("-n", type=int, default=200)
    args = ap.parse_args()
    overhead(args.n)
    if args.real:
        real(args.real)
    return 0


if __name__ == "__main__":
    sys.exit(main())
