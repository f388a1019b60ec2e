"""One `bash` round's harness cost, the walk against inotify (benchmarks/fingerprint.py --rounds).

Importable (benchmarks/scale.py): `make_repo`, `round_context`, `bash_round`, `close_context`.
No assertions: figures only.
"""

from __future__ import annotations

import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.sandbox.guarded import GuardedRunner  # noqa: E402
from cerveau_tui.sandbox.none import NoSandbox  # noqa: E402
from cerveau_tui.tools.base import ToolContext, ToolState  # noqa: E402
from cerveau_tui.tools.bash import Bash  # noqa: E402
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter  # noqa: E402
from cerveau_tui.workspace.git import fast as git_fast  # noqa: E402

MARKER = ".bench-complete"


def make_repo(root: Path, files: int, seed: int = 1) -> None:
    """A tree like a repository: folders 1-6 deep of ~12 files each, sizes around 3 KiB (a few
    large), 10% under node_modules and 5% under build/ (both ignored), a git repository."""
    if (root / MARKER).exists():
        return
    rnd = random.Random(seed)
    blob = os.urandom(1 << 20)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text("build/\n*.log\n")
    tops: dict[str, list[str]] = {
        "src": ["src"],
        "node_modules": ["node_modules"],
        "build": ["build"],
    }
    made = 0
    while made < files:
        share = rnd.random()
        top = "node_modules" if share < 0.10 else "build" if share < 0.15 else "src"
        parents = [p for p in tops[top][-400:] if p.count("/") < 6] or [top]
        d = f"{rnd.choice(parents)}/d{len(tops[top])}"
        (root / d).mkdir(parents=True, exist_ok=True)
        tops[top].append(d)
        for _ in range(rnd.randrange(4, 20)):
            size = min(int(rnd.lognormvariate(7.5, 1.1)), 900_000)
            off = rnd.randrange(0, (1 << 20) - size)
            ext = rnd.choice([".py", ".ts", ".js", ".md", ".json", ".c", ".h"])
            (root / d / f"f{made}{ext}").write_bytes(blob[off : off + size])
            made += 1
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / MARKER).write_text("")


def round_context(ws: Path, *, watch: bool) -> ToolContext:
    """What the engine hands the bash tool: the fingerprint and the git-guarded runner."""
    git_fast.forget(ws)
    fp = Fingerprinter(ws, watch=watch)
    return ToolContext(workspace=ws, state=ToolState(), runner=GuardedRunner(NoSandbox()),
                       fingerprinter=fp)  # fmt: skip


def bash_round(ctx: ToolContext, command: str, reads: tuple[str, ...] = ()) -> tuple[float, float]:
    """(the round's wall ms, the command's own ms): Bash.run (fingerprint before and after, the
    git guard), the progress hook's digest, the changed-on-disk check of `reads`."""
    fp = ctx.fingerprinter
    assert fp is not None
    t0 = time.perf_counter()
    res = Bash().run(Bash.Args(command=command), ctx)
    fp.scan().digest  # noqa: B018  (the progress hook, once per iteration)
    for rel in reads:
        fp.hash_file(rel)
    total = (time.perf_counter() - t0) * 1000
    return total, float(res.meta.get("duration_ms") or 0.0)


def close_context(ctx: ToolContext) -> None:
    if ctx.fingerprinter is not None:
        ctx.fingerprinter.close()
    git_fast.forget(ctx.workspace)


def _p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def run_rounds(ws: Path, rounds: int, *, watch: bool, seed: int = 7) -> dict[str, Any]:
    """Start the fingerprint, wait for it, one warm-up round, then `rounds` rounds."""
    rnd = random.Random(seed)
    tracked = [str(p.relative_to(ws)) for p in (ws / "src").rglob("*.py")][:5000]
    ctx = round_context(ws, watch=watch)
    fp = ctx.fingerprinter
    assert fp is not None
    t0 = time.perf_counter()
    fp.start()
    started = (time.perf_counter() - t0) * 1000
    fp.wait_ready()
    first = (time.perf_counter() - t0) * 1000
    bash_round(ctx, "true")  # the first round pays the guard's first snapshot
    over: list[float] = []
    for i in range(rounds):
        targets = rnd.sample(tracked, rnd.randint(1, 3))
        cmd = " && ".join(f"echo {i} >> {t}" for t in targets)
        total, own = bash_round(ctx, cmd, reads=tuple(targets[:1]))
        over.append(total - own)
    status = fp.status()
    close_context(ctx)
    return {
        "method": status["method"],
        "reason": status["reason"],
        "watches": status["watches"],
        "first_snapshot_ms": round(first, 1),
        "start_returns_ms": round(started, 2),
        "round_overhead_ms_median": round(statistics.median(over), 2),
        "round_overhead_ms_p95": round(_p95(over), 2),
    }


def rounds_main(
    directory: str, files: int, rounds: int, as_json: bool, walk_rounds: int = 5
) -> None:
    ws = Path(directory)
    t0 = time.perf_counter()
    make_repo(ws, files)
    n = sum(1 for _ in ws.rglob("*") if _.is_file())
    made = time.perf_counter() - t0
    out: dict[str, Any] = {"files": files, "files_on_disk": n, "rounds": rounds}
    out["walk"] = run_rounds(ws, min(rounds, walk_rounds), watch=False)
    out["inotify"] = run_rounds(ws, rounds, watch=True)
    out["rss_mb_peak"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if as_json:
        print(json.dumps(out))
        return
    print(f"tree: {n:,} files on disk ({files:,} asked), ready in {made:.1f}s; {rounds} rounds"
          f" ({min(rounds, walk_rounds)} for the walk)")  # fmt: skip
    print(f"{'':<10} {'median ms':>10} {'p95 ms':>8} {'first snapshot ms':>18}  method")
    for key in ("walk", "inotify"):
        r = out[key]
        print(
            f"{key:<10} {r['round_overhead_ms_median']:>10.1f} {r['round_overhead_ms_p95']:>8.1f}"
            f" {r['first_snapshot_ms']:>18.0f}  {r['method']} {r['reason'] or ''}"
        )
    print(f"peak RSS of this process: {out['rss_mb_peak']} MB")
