"""Issue 22 benchmark: what the closed event protocol costs. Prints figures; asserts nothing.

Before (a checkout of the commit before it, e.g. `git worktree add /tmp/h2base e14ae55`) and
after (this checkout), in one run, each measured in its own interpreter:

(a) harness overhead per iteration on the scripted server (everything but the model call,
    median over 200 write_file iterations; benchmarks/harness.py's method);
(b) a 500-turn TUI feed: the wall time to push 500 turns (reasoning, 60 tokens, the answer, two
    tool cards with output and a diff, usage, turn end) through the bus into the app and let
    it settle (benchmarks/tui_bench.py's feed, 200-line outputs);
(c) the bus alone: the same 500 turns' events emitted and typed for a widget (app/wire.py's
    `typed`), no app: what the protocol itself costs per event, without the app's drawing.

(a) and (b) run the whole harness and app, so a loaded machine moves them by more than the
protocol does; (c) is the protocol's own cost.

    .venv/bin/python benchmarks/protocol_bench.py /tmp/h2base        # (a), (b), (c)
    .venv/bin/python benchmarks/protocol_bench.py /tmp/h2base bus    # (c) only
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = r"""
import asyncio, json, statistics, sys, tempfile, time
from pathlib import Path

def overhead(n=200):
    from cerveau_tui.bus import Emitter
    from cerveau_tui.config import load_settings
    from cerveau_tui.provider.llama import LlamaProvider
    from cerveau_tui.session import build_session
    from cerveau_tui.testing.scripted_server import ScriptedServer

    calls = [{"name": "write_file", "arguments": {"path": f"f{i % 20}.txt", "content": f"v{i}\n"}}
             for i in range(n)]
    script = {"responses": [{"tool_calls": [c]} for c in calls] + [{"content": "done"}]}
    durations, starts = [], []
    with tempfile.TemporaryDirectory() as ws, ScriptedServer(script) as srv:
        env = {"CERVEAU_LIMITS__MAX_ITERATIONS": str(n + 5)}
        settings = load_settings(ws, environ=env, user_config=Path(ws) / "none.toml")
        bus = Emitter()
        inner = LlamaProvider(srv.url)
        orig = inner.complete
        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                durations.append(time.perf_counter() - t)
        inner.complete = timed
        session = build_session(settings, bus=bus, provider=inner)
        bus.subscribe(lambda e: starts.append(time.perf_counter()) if e.type == "iteration_started" else None)
        session.engine.run("benchmark")
        session.close()
    iters = [b - a for a, b in zip(starts, starts[1:])]
    return statistics.median((i - m) * 1000 for i, m in zip(iters, durations))

async def feed(turns=500, output_lines=200):
    from cerveau_tui.app.app import CerveauApp
    from cerveau_tui.config import Settings
    ws = Path(tempfile.mkdtemp(prefix="cerveau-protocol-bench-"))
    app = CerveauApp(Settings(workspace=ws), save_setting=lambda k, v: None)
    out = "\n".join(f"line {i}: " + "x" * 60 for i in range(output_lines))
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n"
    text = "The failing test calls add(2, 2) and expects 4; the function subtracts. " * 4
    tokens = [text[i : i + 4] for i in range(0, len(text), 4)][:60]
    async with app.run_test(size=(120, 40)) as pilot:
        bus = app.bus
        t0 = time.perf_counter()
        for t in range(turns):
            bus.emit("turn_started", {"input": f"turn {t}: do the thing"})
            bus.emit("reasoning", {"text": "thinking about it " * 20})
            for tok in tokens:
                bus.emit("token", {"text": tok})
            bus.emit("assistant_message", {})
            for k, (name, args, extra) in enumerate([
                ("bash", {"command": "make test"}, {"output": out, "exit_code": 1, "ok": False}),
                ("edit_file", {"path": "m.py", "old": "b", "new": "c"}, {"output": "edited", "diff": diff, "ok": True}),
            ]):
                cid = f"{t}-{k}"
                bus.emit("tool_call", {"call_id": cid, "name": name, "arguments": args})
                bus.emit("tool_started", {"call_id": cid, "name": name, "status": "running"})
                bus.emit("tool_result", {"call_id": cid, "name": name, "status": "done", **extra})
            bus.emit("usage", {"context_tokens": 3000 + t, "n_ctx": 8192})
            bus.emit("turn_ended", {"reason": "completed", "iterations": 2})
            if t % 10 == 9:
                await pilot.pause()
        await pilot.pause(0.5)
        return time.perf_counter() - t0

def bus_only(turns=500, output_lines=200):
    from cerveau_tui.app.wire import typed
    from cerveau_tui.bus import Emitter
    bus = Emitter()
    bus.subscribe(typed)
    out = "\n".join(f"line {i}: " + "x" * 60 for i in range(output_lines))
    events = 0
    t0 = time.perf_counter()
    for t in range(turns):
        batch = [("turn_started", {"input": f"turn {t}"}), ("reasoning", {"text": "think " * 20})]
        batch += [("token", {"text": "abcd"})] * 60 + [("assistant_message", {})]
        for k, name in enumerate(("bash", "edit_file")):
            cid = f"{t}-{k}"
            batch += [
                ("tool_call", {"call_id": cid, "name": name, "arguments": {"command": "x"}}),
                ("tool_started", {"call_id": cid, "name": name, "status": "running"}),
                ("tool_result", {"call_id": cid, "name": name, "ok": True, "output": out}),
            ]
        batch += [("usage", {"context_tokens": 3000, "n_ctx": 8192}),
                  ("turn_ended", {"reason": "completed", "iterations": 2})]
        for type_, payload in batch:
            bus.emit(type_, payload)
        events += len(batch)
    return (time.perf_counter() - t0) / events * 1e6

import os
which = os.environ.get("PROTOCOL_BENCH", "all")
result = {"bus_us": bus_only()}
if which == "all":
    result |= {"overhead_ms": overhead(), "feed_s": asyncio.run(feed())}
print(json.dumps(result))
"""


def measure(root: Path, which: str) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(root)!r})\n" + WORKER],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PROTOCOL_BENCH": which},
        timeout=1800,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{root}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/h2base")
    which = sys.argv[2] if len(sys.argv) > 2 else "all"  # "bus": (c) only, in seconds
    before, after = measure(base, which), measure(ROOT, which)
    print(f"before: {base}   after: {ROOT}")
    for key, label, unit in (
        ("overhead_ms", "(a) harness overhead per iteration, median", "ms"),
        ("feed_s", "(b) 500-turn TUI feed, wall time", "s"),
        ("bus_us", "(c) bus alone: emit + type one event", "µs"),
    ):
        if key not in before:
            continue
        b, a = before[key], after[key]
        print(f"{label}: before {b:.3f} {unit}, after {a:.3f} {unit}, after/before {a / b:.2f}")


if __name__ == "__main__":
    main()
