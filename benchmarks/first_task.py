"""A new user's first task on the embedded model, bounded, and the rounds lost to each cause.

    .venv/bin/python benchmarks/first_task.py [--repo PATH ...] [--server URL] [--turns N]
        [--max-tokens 256] [--max-iterations 4] [--timeout 150]
        [--seeds 1,2,3 --temperature 0.2] [--events DIR]
    .venv/bin/python benchmarks/first_task.py --recount DIR

The scenario of issue 24 (cerveau_tui/testing/first_task.py): a one-bug pytest project (`add`
subtracts), the detected gate (the project's pytest), 3 turns of `cerveau run --json` with
`--continue` (the task, "go on", "hello"), at most 4 rounds a turn and 256 tokens a reply, the
real llama-server with SmolLM2-135M (started here from the cache, n_ctx 8192, unless `--server`
names one). Each `--repo` is a checkout whose CLI runs the same scenario on the same server (the
code before: `git worktree add /tmp/h24base <commit>`), in a fresh project each time.

Prints, per checkout: the rounds, each cause's lost rounds (loop/guards/lost_rounds.py: timeout,
truncation_repeat, truncated, refused_action, copied_failure, repeat_stop), how often the done
check ran, how each turn ended, whether the bug got fixed, wall time. The tiny model's actions
are random (temperature 0 keeps them repeatable for one build): figures, not a verdict.

Samples: `--seeds` starts a fresh server per seed AND per checkout (`llama-server --seed S`; a
warm slot changes the model's choices), at `--temperature` (0.2 is the product's default; at 0 the
seed changes nothing). With several seeds, a last table gives each figure's median, its range
over the seeds, and the ratio of the totals to the first checkout's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cerveau_tui.loop.guards.lost_rounds import CAUSES, LostRounds, count_lost  # noqa: E402
from cerveau_tui.testing.first_task import TURNS, make_project, run_first_task  # noqa: E402


def _server(url: str | None, seed: int | None = None):  # type: ignore[no-untyped-def]
    if url:
        return url, None
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.stack.server import managed_for

    paths = stack_paths()
    loc = locate(paths)
    if not loc.ready or loc.binary is None or loc.model is None:
        raise SystemExit("the stack is not provisioned: python -m cerveau_tui.stack provision")
    server = managed_for(paths, loc.binary, loc.model, n_ctx=8192)
    if seed is not None:
        server.extra_args = (*server.extra_args, "--seed", str(seed))
    server.start(timeout_s=120.0)
    return server.url, server


def refused(turns: list[list[dict[str, Any]]]) -> list[tuple[str, str]]:
    """The constrained actions the tools refused (error class `args`), with the first line said."""
    out = []
    for events in turns:
        calls = {e["payload"]["call_id"]: e["payload"] for e in events if e["type"] == "tool_call"}
        for e in events:
            p = e["payload"]
            c = calls.get(p.get("call_id", ""))
            refusal = p.get("error_class") == "args" and p.get("exit_code") is None
            if e["type"] == "tool_result" and refusal and c:
                if c.get("via") == "constrained":
                    line = (p.get("output") or "").strip().splitlines()[:1]
                    label = f"{c['name']} {json.dumps(c.get('arguments'))}"[:160]
                    out.append((label, line[0][:160] if line else ""))
    return out


FIGURES = ("rounds", *CAUSES, "lost in all", "done check ran", "turns completed", "bug fixed")


def _figures(lost: LostRounds, fixed: bool) -> dict[str, int]:
    out = {"rounds": lost.rounds, **{c: lost.lost[c] for c in CAUSES}}
    out["lost in all"] = sum(lost.lost.values())
    out["done check ran"] = lost.checks
    out["turns completed"] = sum(1 for e in lost.ended if e == "completed")
    out["bug fixed"] = int(fixed)
    return out


def _one(repo: Path, url: str, args: argparse.Namespace, label: str) -> dict[str, int]:
    with tempfile.TemporaryDirectory(prefix="cerveau-first-task-") as tmp:
        ws = Path(tmp) / "ws"
        make_project(ws)
        t0 = time.monotonic()
        run = run_first_task(
            ws,
            url,
            repo=repo,
            turns=TURNS[: args.turns],
            max_iterations=args.max_iterations,
            max_tokens=args.max_tokens,
            timeout=args.timeout,
            temperature=args.temperature,
        )
        wall = time.monotonic() - t0
        lost = count_lost(run.turns)
        fixed = "return a + b" in (ws / "calc.py").read_text()
        if args.events is not None:  # every turn's events, to count again (--recount)
            args.events.mkdir(parents=True, exist_ok=True)
            dump = {"turns": run.turns, "fixed": fixed}
            (args.events / f"{label}.json").write_text(json.dumps(dump), encoding="utf-8")
    print(f"  {lost.rounds} rounds in {lost.turns} turns, {wall:.0f} s wall")
    for cause in CAUSES:
        print(f"  lost to {cause:<18} {lost.lost[cause]}")
    print(f"  done check ran {lost.checks}x; turns ended: {', '.join(lost.ended)}")
    print(f"  bug fixed: {'yes' if fixed else 'no'}; exit codes {run.returncodes}")
    for call, out in refused(run.turns):
        print(f"  refused: {call} -> {out}")
    if any(c < 0 for c in run.returncodes) or "" in lost.ended:
        # A turn with no end event: what the CLI said last (a timeout, a crash) is the figure.
        print(f"  a turn has no end; stderr ends: {run.stderr.strip()[-600:]!r}")
    sys.stdout.flush()
    return _figures(lost, fixed)


def _table(repos: list[Path], seen: dict[Path, list[dict[str, int]]]) -> None:
    """Each figure per checkout: median [min-max] over the seeds, and the total's ratio to the
    first checkout's."""
    n = len(seen[repos[0]])
    print(f"\nover {n} seeds: median [min-max] per sample; ratio = total / first checkout's total")
    print(f"{'':<20}" + "".join(f"{r.name[:24]:>28}" for r in repos))
    for fig in FIGURES:
        cells = []
        base = sum(x[fig] for x in seen[repos[0]])
        for r in repos:
            vals = [x[fig] for x in seen[r]]
            cell = f"{statistics.median(vals):g} [{min(vals)}-{max(vals)}]"
            if r != repos[0]:
                total = sum(vals)
                cell += f" x{total / base:.2f}" if base else f" ({total} vs 0)"
            cells.append(f"{cell:>28}")
        print(f"{fig:<20}" + "".join(cells))


def recount(folder: Path) -> int:
    """The table again from the events `--events` kept (`<checkout>-seed<S>.json`), counted by
    today's lost_rounds. A dump that is a bare list (the first format) has no `fixed`: 0."""
    seen: dict[Path, list[dict[str, int]]] = {}
    for dump in sorted(folder.glob("*-seed*.json")):
        data = json.loads(dump.read_text(encoding="utf-8"))
        turns, fixed = (data, False) if isinstance(data, list) else (data["turns"], data["fixed"])
        seen.setdefault(Path(dump.stem.rsplit("-seed", 1)[0]), []).append(
            _figures(count_lost(turns), fixed)
        )
    if not seen:
        print(f"no dumps (<checkout>-seed<S>.json) in {folder}")
        return 1
    repos = sorted(seen, key=lambda r: ("before" not in r.name, r.name))  # the code before first
    _table(repos, seen)
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, action="append", help="a checkout whose CLI runs")
    ap.add_argument("--server", help="a running llama-server (default: start the cached stack)")
    ap.add_argument("--turns", type=int, default=len(TURNS))
    ap.add_argument("--max-tokens", type=int, default=256, help="the reply cap")
    ap.add_argument("--max-iterations", type=int, default=4, help="rounds a turn")
    ap.add_argument("--timeout", type=float, default=150.0, help="seconds a turn may take")
    ap.add_argument("--seeds", default="", help="server seeds, comma-separated: one sample each")
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--events", type=Path, help="a folder for each run's events (JSON)")
    ap.add_argument("--recount", type=Path, help="only count again what --events kept there")
    args = ap.parse_args(argv)
    if args.recount is not None:
        return recount(args.recount)
    repos = [p.resolve() for p in (args.repo or [REPO])]
    seeds: list[int | None] = [int(x) for x in args.seeds.split(",") if x.strip()] or [None]
    seen: dict[Path, list[dict[str, int]]] = {r: [] for r in repos}
    for i, seed in enumerate(seeds):
        # Alternate which checkout goes first: the machine's load drifts during a long run.
        for repo in repos if i % 2 == 0 else repos[::-1]:
            url, server = _server(args.server, seed)
            try:
                print(f"CLI from {repo}" + (f", seed {seed}" if seed is not None else ""))
                seen[repo].append(_one(repo, url, args, f"{repo.name}-seed{seed}"))
            finally:
                if server is not None:
                    server.stop()
    if len(seeds) > 1:
        _table(repos, seen)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
