"""TUI benchmarks (headless; prints figures, asserts nothing).

    .venv/bin/python benchmarks/tui_bench.py [absorb|latency|memory|startup ...]

(a) absorb:  tokens/s the chat absorbs from the bus (an unlimited feed from a worker thread, as
             the engine emits), with the key latency measured meanwhile.
(b) latency: delay between a key press and its action while 1,000 tokens/s stream in (p50, p99).
             Keys are posted from a separate thread, as the terminal driver's input thread does.
(c) memory:  RSS after a 500-turn session (answers, reasoning, a tool card with a long output and
             a diff per turn) fed through the bus exactly as the engine emits it.
(d) startup: process start to the first frame painted (a fresh interpreter, headless): the app
             alone (app), and after `cerveau`'s parser and settings (cli).
"""

from __future__ import annotations

import asyncio
import collections
import gc
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402
from textual.binding import Binding  # noqa: E402

from cerveau_tui.app.app import CerveauApp, tune_gc  # noqa: E402
from cerveau_tui.app.widgets.answer import StreamingAnswer  # noqa: E402
from cerveau_tui.config import Settings  # noqa: E402

PARAGRAPH = (
    "The failing test calls `add(2, 2)` and expects **4**. Looking at the module, the function "
    "subtracts instead of adding, so I will fix the operator and run the suite again.\n\n"
    "```python\ndef add(a, b):\n    return a + b\n```\n\n"
)
TOKENS = [PARAGRAPH[i : i + 4] for i in range(0, len(PARAGRAPH), 4)]


class BenchApp(CerveauApp):
    BINDINGS = [Binding("f12", "probe", "probe", show=False)]

    def __init__(self, *a: Any, **k: Any) -> None:
        super().__init__(*a, **k)
        self.sent: collections.deque[float] = collections.deque()
        self.latencies: list[float] = []

    def action_probe(self) -> None:
        if self.sent:
            self.latencies.append(time.perf_counter() - self.sent.popleft())


def _app() -> BenchApp:
    ws = Path(tempfile.mkdtemp(prefix="cerveau-tui-bench-"))
    return BenchApp(Settings(workspace=ws), save_setting=lambda k, v: None)


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000 if xs else float("nan")


def _prober(app: BenchApp, stop: threading.Event, every_s: float = 0.05) -> threading.Thread:
    def run() -> None:
        while not stop.wait(every_s):
            app.sent.append(time.perf_counter())
            app.post_message(events.Key("f12", None))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _feeder(app: BenchApp, n: int, rate: float | None, done: threading.Event) -> threading.Thread:
    def run() -> None:
        app.bus.emit("turn_started", {"input": "bench"})
        start = time.perf_counter()
        batch = 10
        for i in range(0, n, batch):
            for tok in TOKENS[i % len(TOKENS) : i % len(TOKENS) + batch] or TOKENS[:batch]:
                app.bus.emit("token", {"text": tok})
            if rate:
                due = start + (i + batch) / rate
                delay = due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
        done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


async def _stream(n: int, rate: float | None) -> tuple[float, list[float], int]:
    gc.collect()  # the previous section's app is garbage; do not bill its collection to this one
    app = _app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.2)
        stop, fed = threading.Event(), threading.Event()
        prober = _prober(app, stop)
        start = time.perf_counter()
        _feeder(app, n, rate, fed)
        while not fed.is_set():
            await asyncio.sleep(0.01)
        # absorbed: until the bridge is empty and the last drain applied
        while app.bridge._outbox:
            await asyncio.sleep(0.005)
        await pilot.pause()
        elapsed = time.perf_counter() - start
        stop.set()
        prober.join()
        await pilot.pause(0.2)  # let the last probe keys land before the app closes
        received = sum(len(a.source) for a in app.query(StreamingAnswer))
        return elapsed, app.latencies, received


def bench_absorb(n: int = 20_000) -> None:
    elapsed, lat, received = asyncio.run(_stream(n, None))
    print(
        f"(a) unlimited feed: absorbed {n:,} tokens in {elapsed:.2f} s = {n / elapsed:,.0f} tokens/s "
        f"({received:,} chars shown); key latency meanwhile p50 {_pct(lat, 0.5):.1f} ms "
        f"p99 {_pct(lat, 0.99):.1f} ms over {len(lat)} presses (the feeder thread holds the GIL)"
    )
    for rate in (2_000.0, 4_000.0):
        elapsed, lat, _ = asyncio.run(_stream(int(rate * 5), rate))
        print(
            f"(a) paced at {rate:,.0f} tokens/s: absorbed {rate * 5 / elapsed:,.0f} tokens/s, key "
            f"latency p50 {_pct(lat, 0.5):.1f} ms p99 {_pct(lat, 0.99):.1f} ms over {len(lat)} presses"
        )


def bench_latency(seconds: float = 10.0, rate: float = 1000.0) -> None:
    n = int(seconds * rate)
    elapsed, lat, _ = asyncio.run(_stream(n, rate))
    print(
        f"(b) at {rate:,.0f} tokens/s for {elapsed:.1f} s: key latency p50 {_pct(lat, 0.5):.1f} ms "
        f"p99 {_pct(lat, 0.99):.1f} ms max {_pct(lat, 1.0):.1f} ms over {len(lat)} presses"
    )


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _session(turns: int, output_lines: int) -> tuple[float, float, int]:
    app = _app()
    before = _rss_mb()
    out = "\n".join(f"line {i}: " + "x" * 60 for i in range(output_lines))
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n"
    async with app.run_test(size=(120, 40)) as pilot:
        bus = app.bus
        for t in range(turns):
            bus.emit("turn_started", {"input": f"turn {t}: do the thing"})
            bus.emit("reasoning", {"text": "thinking about it " * 20})
            for tok in TOKENS[:60]:
                bus.emit("token", {"text": tok})
            bus.emit("assistant_message", {})
            for k, (name, args, extra) in enumerate(
                [
                    (
                        "bash",
                        {"command": "make test"},
                        {"output": out, "exit_code": 1, "ok": False},
                    ),
                    (
                        "edit_file",
                        {"path": "m.py", "old": "b", "new": "c"},
                        {"output": "edited", "diff": diff, "ok": True},
                    ),
                ]
            ):
                cid = f"{t}-{k}"
                bus.emit("tool_call", {"call_id": cid, "name": name, "arguments": args})
                bus.emit("tool_started", {"call_id": cid, "name": name, "status": "running"})
                bus.emit("tool_result", {"call_id": cid, "name": name, "status": "done", **extra})
            bus.emit(
                "usage", {"context_tokens": 3000 + t, "n_ctx": 8192, "predicted_per_second": 40.0}
            )
            bus.emit("turn_ended", {"reason": "completed", "iterations": 2})
            if t % 10 == 9:
                await pilot.pause()
        await pilot.pause(0.5)
        widgets = len(list(app.query("*")))
        return before, _rss_mb(), widgets


def bench_memory(turns: int = 500, output_lines: int = 2_000) -> None:
    start = time.perf_counter()
    before, after, widgets = asyncio.run(_session(turns, output_lines))
    print(
        f"(c) {turns} turns, {output_lines:,}-line tool output each: RSS {after:.0f} MB "
        f"(process before the app: {before:.0f} MB), {widgets:,} widgets mounted at the end, "
        f"{time.perf_counter() - start:.1f} s to feed"
    )


STARTUP = r"""
import time, sys
t0, c0 = time.perf_counter(), time.process_time()
sys.path.insert(0, {root!r})
from pathlib import Path
{settings}
from cerveau_tui.app.app import CerveauApp
t_import = time.perf_counter()
class A(CerveauApp):
    def on_ready(self):
        self.call_after_refresh(self._first)
    def _first(self):
        now, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"{{t_import - t0:.3f}} {{now:.3f}} {{cpu:.3f}}", flush=True)
        self.exit()
A(settings, save_setting=lambda k, v: None).run(headless=True, size=(120, 40))
"""
#: How the script gets its settings: as the benchmark always did, or as `cerveau` does (its
#: parser and settings first, with what they import: the CLI's part of a person's first frame).
SETTINGS = {
    "app": "from cerveau_tui.config import Settings\nsettings = Settings(workspace=Path({ws!r}))",
    "cli": "from cerveau_tui.cli import _settings, build_parser\n"
    "settings = _settings(build_parser().parse_args(['-w', {ws!r}]))",
}


def bench_startup(runs: int = 5) -> None:
    # In the home: `cerveau` refuses a workspace in a folder other users share (/tmp).
    ws = tempfile.mkdtemp(prefix="cerveau-tui-bench-", dir=Path.home())
    for how, settings in SETTINGS.items():
        code = STARTUP.format(root=str(ROOT), ws=ws, settings=settings.format(ws=ws))
        walls, frames, imports, cpus = [], [], [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            res = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
            )
            walls.append(time.perf_counter() - t0)
            parts = res.stdout.split()
            if len(parts) >= 3:
                imports.append(float(parts[0]))
                frames.append(float(parts[1]))
                cpus.append(float(parts[2]))
            else:
                print(res.stdout, res.stderr)
        med = statistics.median
        print(
            f"(d) {how}: first frame {med(frames) * 1000:.0f} ms after the script starts (imports "
            f"{med(imports) * 1000:.0f} ms; CPU {med(cpus) * 1000:.0f} ms, the figure a loaded "
            f"machine moves least); whole process incl. interpreter and exit "
            f"{med(walls) * 1000:.0f} ms; medians of {runs}"
        )


if __name__ == "__main__":
    tune_gc()  # as run_app does: measure what ships
    wanted = sys.argv[1:] or ["absorb", "latency", "memory", "startup"]
    for name in wanted:
        {
            "absorb": bench_absorb,
            "latency": bench_latency,
            "memory": bench_memory,
            "startup": bench_startup,
        }[name]()
