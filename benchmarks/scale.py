"""Issue 26: the harness on big repositories. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/scale.py --files 100000 --rounds 20 --json
    .venv/bin/python benchmarks/scale.py --files 10000 --before     # also the old engines
    .venv/bin/python benchmarks/scale.py --all                      # 1k, 10k, 100k (--huge: 300k)

A workspace of N files shaped like a real repository (folders 3-6 deep, ~20 files each, sizes
log-normal around 2.5 KB, an ignored `node_modules/` and `build/`, a `.git` with one commit) is
generated once and cached under /tmp/cerveau-scale/ (300,000 files is ~1.3 GB and minutes: only
with --huge). A scripted session then runs through the real engine, the real policy and the real
sandbox (build_session, as benchmarks/harness.py): R `bash` rounds that each change 1-3 files,
5 `search` calls and 5 `read_file` calls. Each session runs in a child process of its own, so
its peak RSS is the harness's alone.

Figures: per-round harness overhead of a `bash` round (the iteration's wall time minus the model
call), median and p95, MINUS the same on a 10-file workspace (what is left grows with the tree:
the sandbox's own start is in both); `search` latency (the tool's own duration, median); the
first-prompt latency (session build to the first model request); the peak RSS of the harness,
and its excess over the 10-file session. `--before` runs the same session again with the old
fingerprint forced (CERVEAU_FINGERPRINT=walk) in the same run. (Search has one engine, rg: the
trigram index it had was measured here and removed, see the commit that did.)
The machine is shared and noisy: read the ratios, not the last digit.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CACHE = Path(os.environ.get("CERVEAU_SCALE_CACHE", "/tmp/cerveau-scale"))
MARKER = ".scale-complete"
SMALL_FILES = 10
#: Shares of the tree: tracked source, an ignored dependency tree, an ignored build output.
NODE_SHARE, BUILD_SHARE = 0.08, 0.02
SEARCHES = [
    {"pattern": "RARE_NEEDLE_[0-9]+"},  # a few hits: the whole tree is read
    {"pattern": "def func_1[0-9]{2}\\("},  # thousands of hits: the cap
    {"pattern": "NEVER_PRESENT_ANYWHERE"},  # none: the whole tree is read
    {"pattern": "class [A-Z][a-z]+Error", "path": "src/pkg001"},  # one subtree
    {"pattern": "return x \\+ 4[0-9]"},
]


def _base_text() -> str:
    rnd = random.Random(26)
    words = ["alpha", "beta", "gamma", "delta", "cache", "index", "node", "tree", "walk", "scan"]
    lines: list[str] = []
    for k in range(40_000):
        r = rnd.random()
        if r < 0.3:
            lines.append(f"def func_{k % 997}(x):")
        elif r < 0.55:
            lines.append(f"    return x + {k % 113}  # {rnd.choice(words)} {rnd.choice(words)}")
        elif r < 0.6:
            lines.append(f"class {rnd.choice(words).title()}Error(Exception):")
        elif r < 0.8:
            lines.append(f"    {rnd.choice(words)}_{k % 31} = {rnd.choice(words)}({k})")
        else:
            lines.append("")
    return "\n".join(lines) + "\n"


def _layout(n: int) -> list[str]:
    """n relative paths: ~20 files a folder, folders 3-6 deep, the shares above ignored."""
    rnd = random.Random(n)
    paths: list[str] = []
    n_node = int(n * NODE_SHARE)
    n_build = int(n * BUILD_SHARE)
    n_src = n - n_node - n_build
    exts = [".py", ".py", ".py", ".ts", ".md", ".json", ".txt"]
    for i in range(n_src):
        d = i // 20
        parts = ["src", f"pkg{d % 50:03d}", f"mod{(d // 50) % 40:02d}"]
        depth = rnd.randint(0, 3)
        parts += [f"sub{(d // 2000 + j) % 9}" for j in range(depth)]
        paths.append("/".join(parts) + f"/file{i:06d}{rnd.choice(exts)}")
    for i in range(n_node):
        d = i // 20
        paths.append(f"node_modules/dep{d % 200:03d}/lib/part{d // 200:03d}/m{i:06d}.js")
    for i in range(n_build):
        paths.append(f"build/out{i // 20:04d}/o{i:06d}.js")
    return paths


def generate(n: int) -> Path:
    """The cached workspace of n files (built once; a marker says it is complete)."""
    root = CACHE / f"ws-{n}"
    if (root / MARKER).exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    t0 = time.perf_counter()
    root.mkdir(parents=True)
    base = _base_text()
    rnd = random.Random(7)
    made: set[str] = set()
    for i, rel in enumerate(_layout(n)):
        parent = rel.rsplit("/", 1)[0]
        if parent not in made:
            (root / parent).mkdir(parents=True, exist_ok=True)
            made.add(parent)
        size = min(int(rnd.lognormvariate(math.log(2500), 1.0)), 400_000)
        off = rnd.randrange(0, len(base) - size - 1) if size < len(base) - 1 else 0
        off = base.find("\n", off) + 1
        body = base[off : off + size]
        if i % 20_011 == 7:
            body += f"RARE_NEEDLE_{i}\n"
        (root / rel).write_text(body)
    (root / ".gitignore").write_text("node_modules/\nbuild/\n*.log\n")
    scratch = root / "src" / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    for name in "abc":
        (scratch / f"{name}.txt").write_text("start\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "core.compression=1"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "scale"], check=True)
    (root / ".git" / "info" / "exclude").write_text(f"{MARKER}\n.cerveau/\n")
    (root / MARKER).write_text("")
    print(
        f"[scale] generated {n} files in {time.perf_counter() - t0:.0f} s: {root}", file=sys.stderr
    )
    return root


def script(rounds: int, reads: list[str]) -> dict[str, Any]:
    responses: list[dict[str, Any]] = []
    for r in range(rounds):
        k = 1 + r % 3  # 1-3 files changed by each round
        cmd = "; ".join(f"printf 'round {r}\\n' >> src/scratch/{c}.txt" for c in "abc"[:k])
        responses.append({"tool_calls": [{"name": "bash", "arguments": {"command": cmd}}]})
    for args in SEARCHES:
        responses.append({"tool_calls": [{"name": "search", "arguments": args}]})
    for rel in reads:
        responses.append({"tool_calls": [{"name": "read_file", "arguments": {"path": rel}}]})
    responses.append({"content": "done"})
    return {"responses": responses}


def child(ws: Path, rounds: int) -> dict[str, Any]:
    """One scripted session over `ws`, in this process; its figures as a dict."""
    import resource

    from cerveau_tui.bus import Emitter
    from cerveau_tui.config import load_settings
    from cerveau_tui.provider.llama import LlamaProvider
    from cerveau_tui.session import build_session
    from cerveau_tui.testing.scripted_server import ScriptedServer

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from harness import Timed

    reads = sorted(str(p.relative_to(ws)) for p in (ws / "src" / "pkg000").rglob("*.py"))[:5]
    plan = script(rounds, reads or ["src/scratch/a.txt"] * 5)
    tools = [r["tool_calls"][0]["name"] for r in plan["responses"] if "tool_calls" in r]
    # A window large enough for the whole script: at 4,096 tokens the searches' answers filled
    # it, a compaction summary took the next scripted response, and one search never ran.
    with ScriptedServer(plan, n_ctx=65_536) as srv, tempfile.TemporaryDirectory() as home:
        env = {
            "CERVEAU_LIMITS__MAX_ITERATIONS": str(len(tools) + 5),
            "CERVEAU_LIMITS__MAX_IDENTICAL_CALLS": "1000",
            # 10 read-only calls in a row (the searches, the reads) are no progress: not a stall.
            "CERVEAU_LIMITS__PROGRESS_STALL_LIMIT": "100",
        }
        t0 = time.perf_counter()
        settings = load_settings(ws, environ=env, user_config=Path(home) / "none.toml")
        bus = Emitter()
        provider = Timed(LlamaProvider(srv.url))
        first: list[float] = []
        inner = provider.complete

        def complete(*a: Any, **k: Any) -> Any:
            if not first:
                first.append(time.perf_counter())
            return inner(*a, **k)

        provider.complete = complete  # type: ignore[method-assign]
        session = build_session(settings, bus=bus, provider=provider)  # type: ignore[arg-type]
        starts: list[float] = []
        results: list[dict[str, Any]] = []

        def on_event(e: Any) -> None:
            if e.type == "iteration_started":
                starts.append(time.perf_counter())
                provider.iteration = e.payload["iteration"]
            elif e.type == "tool_result":
                results.append(dict(e.payload))

        bus.subscribe(on_event)
        out = session.engine.run("benchmark")
        starts.append(time.perf_counter())
        session.close()
    iters = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    model = provider.durations + [0.0] * len(iters)
    over = [(i - m) * 1000 for i, m in zip(iters, model, strict=False)]
    bash = [o for o, name in zip(over, tools, strict=False) if name == "bash"]
    searches = [r for r in results if r["name"] == "search"]
    failed = [r["output"][:200] for r in results if not r["ok"]]
    return {
        "reason": str(out.reason),
        "bash_rounds": len(bash),
        "round_ms": bash,
        "search_ms": [r["duration_ms"] for r in searches],
        "search_first_lines": [r["output"].splitlines()[-1][:160] for r in searches],
        "read_ms": [r["duration_ms"] for r in results if r["name"] == "read_file"],
        "first_prompt_ms": (first[0] - t0) * 1000 if first else None,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "failed": failed,
        "calls": len(results),
    }


def run_child(ws: Path, rounds: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", str(ws), "--rounds", str(rounds)]
    out = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=3600
    )
    if out.returncode != 0:
        raise SystemExit(f"child failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[max(0, math.ceil(len(s) * 0.95) - 1)] if s else float("nan")


def figures(n: int, rounds: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    small = run_child(generate(SMALL_FILES), rounds, env)
    big = run_child(generate(n), rounds, env)
    s_med, s_p95 = statistics.median(small["round_ms"]), p95(small["round_ms"])
    return {
        "files": n,
        "rounds": rounds,
        "round_overhead_ms_median": round(statistics.median(big["round_ms"]) - s_med, 1),
        "round_overhead_ms_p95": round(p95(big["round_ms"]) - s_p95, 1),
        "search_ms_median": round(statistics.median(big["search_ms"]), 1),
        "search_ms_max": round(max(big["search_ms"]), 1),
        "read_file_ms_median": round(statistics.median(big["read_ms"]), 1),
        "first_prompt_ms": round(big["first_prompt_ms"] or 0, 1),
        "first_prompt_ms_small": round(small["first_prompt_ms"] or 0, 1),
        "rss_mb": round(big["rss_mb"], 1),
        "rss_mb_small": round(small["rss_mb"], 1),
        "rss_mb_over_small": round(big["rss_mb"] - small["rss_mb"], 1),
        "round_ms_median_raw": round(statistics.median(big["round_ms"]), 1),
        "round_ms_median_small": round(s_med, 1),
        "search_ms": [round(x) for x in big["search_ms"]],
        "search_tails": big["search_first_lines"],
        "turn_ended": big["reason"],
        "calls": big["calls"],
        "failed_calls": big["failed"],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json", action="store_true", help="one JSON object per size")
    ap.add_argument("--before", action="store_true", help="also with the old engines forced")
    ap.add_argument("--all", action="store_true", help="1,000 / 10,000 / 100,000 files")
    ap.add_argument("--huge", action="store_true", help="allow 300,000 files (with --all: add it)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child), args.rounds)))
        return 0
    sizes = (
        [1_000, 10_000, 100_000] + ([300_000] if args.huge else []) if args.all else [args.files]
    )
    if max(sizes) > 100_000 and not args.huge:
        ap.error("more than 100,000 files needs --huge (~1.3 GB on disk, minutes to generate)")
    for n in sizes:
        res = figures(n, args.rounds)
        if args.before:
            old = {"CERVEAU_FINGERPRINT": "walk"}
            res["before"] = {
                k: v
                for k, v in figures(n, args.rounds, old).items()
                if k.endswith(("_ms_median", "_p95", "rss_mb", "first_prompt_ms"))
            }
        if args.json:
            print(json.dumps(res))
        else:
            print(
                f"{n:>7} files: round overhead median {res['round_overhead_ms_median']} ms, p95 "
                f"{res['round_overhead_ms_p95']} ms; search median {res['search_ms_median']} ms; "
                f"first prompt {res['first_prompt_ms']} ms; RSS {res['rss_mb']} MB "
                f"(+{res['rss_mb_over_small']} over {SMALL_FILES} files)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
