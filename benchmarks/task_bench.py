"""The harness benchmark of tasks (benchmarks/tasks/, format in its README), on the embedded model
over several seeds, or on the scripted pathological models.

    .venv/bin/python benchmarks/task_bench.py [--repo PATH ...] [--seeds 1,2,3,4,5]
        [--temperature 0.2] [--max-tokens 192] [--max-iterations 3] [--timeout 90]
        [--only TASK,...] [--server URL] [--events DIR]
    .venv/bin/python benchmarks/task_bench.py --scripted [--repo PATH ...] [--only SCRIPT,...]

Each `--repo` is a checkout whose CLI runs (the code before: `git worktree add -f /tmp/wt-base
<commit>`); the figures are counted by this checkout's loop/guards/lost_rounds.py for all of them.
The embedded model: a fresh llama-server (SmolLM2-135M from the cache, n_ctx 8192) per seed AND
per checkout (`--seed S`; a warm slot changes the model's choices), every task run on it in the
same order; which checkout goes first alternates with the seed (the machine's load drifts).

`--scripted`: each script in benchmarks/task_scripts/ (a pathological model: a span repeated
inside a write_file, a 20-step plan for a question, ...) answers its task through a scripted
llama-server (cerveau_tui/testing/scripted_server.py). A script marked `"legitimate": true`
writes repetitive content that is meant (a table, test data): its repetition cuts are FALSE trips.

Prints per task (summed over the seeds; `passed` counts the seeds whose hidden check passed) and
in total: rounds, the rounds lost by cause, valid actions, false "done", tokens evaluated, wall
time; then, with two checkouts, the totals side by side. The tiny model's actions are random:
figures, not a verdict.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from first_task import _server  # noqa: E402  (beside this file: the same embedded server)

from cerveau_tui.testing.scripted_server import ScriptedServer  # noqa: E402
from cerveau_tui.testing.task_bench import FIGURES, TaskRun, load_tasks, run_task  # noqa: E402

SCRIPTS = REPO / "benchmarks" / "task_scripts"
SHORT = {
    "truncation_repeat": "trunc_rep",
    "repetition_cut": "rep_cut",
    "refused_action": "refused",
    "copied_failure": "copied",
    "repeat_stop": "repeat",
    "lost in all": "lost",
    "valid actions": "valid",
    "false done": "false_done",
    "tokens evaluated": "tokens",
    "false trips": "false_trips",
    "wall s": "wall_s",
}


def table(title: str, rows: dict[str, list[dict[str, float]]], extra: tuple[str, ...] = ()) -> None:
    """One line a task (its runs summed) and the total."""
    figs = (*FIGURES, *extra)
    heads = [SHORT.get(f, f) for f in figs]
    width = max(12, *(len(r) for r in rows)) + 1
    print(f"\n{title}")
    print(f"{'task':<{width}}" + "".join(f"{h:>{max(len(h), 5) + 1}}" for h in heads))
    total = {f: 0.0 for f in figs}
    for name, runs in rows.items():
        summed = {f: sum(r.get(f, 0) for r in runs) for f in figs}
        for f in figs:
            total[f] += summed[f]
        cells = [f"{summed[f]:>{max(len(h), 5) + 1}.0f}" for f, h in zip(figs, heads, strict=True)]
        print(f"{name:<{width}}" + "".join(cells))
    cells = [f"{total[f]:>{max(len(h), 5) + 1}.0f}" for f, h in zip(figs, heads, strict=True)]
    print(f"{'TOTAL':<{width}}" + "".join(cells))
    sys.stdout.flush()


def _say(label: str, run: TaskRun) -> None:
    f = run.figures
    lost = ", ".join(f"{SHORT.get(c, c)} {f[c]:.0f}" for c in FIGURES[1:8] if f[c])
    print(
        f"  {label} {run.task}: {f['rounds']:.0f} rounds (lost: {lost or 'none'}), "
        f"{f['valid actions']:.0f} valid, ended {','.join(run.ended) or '-'}, "
        f"{f['tokens evaluated']:.0f} tok, {f['wall s']:.0f} s, "
        f"check {'PASSED' if f['passed'] else 'failed'}"
        + ("" if f["passed"] else f" ({run.check_output[-120:]!r})")
    )
    sys.stdout.flush()


def _dump(folder: Path | None, label: str, run: TaskRun) -> None:
    if folder is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    data = {"figures": run.figures, "ended": run.ended, "check": run.check_output}
    (folder / f"{label}-{run.task}.json").write_text(
        json.dumps({**data, "turns": run.events}), encoding="utf-8"
    )


def embedded(args: argparse.Namespace, repos: list[Path]) -> int:
    tasks = load_tasks(only=args.only)
    seeds: list[int | None] = [int(x) for x in args.seeds.split(",") if x.strip()] or [None]
    seen: dict[Path, dict[str, list[dict[str, float]]]] = {
        r: {t.name: [] for t in tasks} for r in repos
    }
    t_start = time.monotonic()
    for i, seed in enumerate(seeds):
        for repo in repos if i % 2 == 0 else repos[::-1]:
            url, server = _server(args.server, seed)
            try:
                print(f"CLI from {repo}, seed {seed}")
                for task in tasks:
                    with tempfile.TemporaryDirectory(prefix="cerveau-task-") as tmp:
                        run = run_task(
                            task,
                            url,
                            Path(tmp),
                            repo=repo,
                            max_iterations=args.max_iterations,
                            max_tokens=args.max_tokens,
                            timeout=args.timeout,
                            temperature=args.temperature,
                        )
                    seen[repo][task.name].append(run.figures)
                    _say(f"seed {seed}", run)
                    _dump(args.events, f"{repo.name}-seed{seed}", run)
            finally:
                if server is not None:
                    server.stop()
        print(f"  ({time.monotonic() - t_start:.0f} s so far)")
    for repo in repos:
        table(f"CLI from {repo}, {len(seeds)} seeds summed", seen[repo])
    _totals(repos, seen)
    print(f"\nwhole run: {time.monotonic() - t_start:.0f} s wall")
    return 0


def _totals(repos: list[Path], seen: dict[Path, dict[str, list[dict[str, float]]]]) -> None:
    if len(repos) < 2:
        return
    print("\ntotals side by side")
    print(f"{'':<18}" + "".join(f"{r.name[:22]:>24}" for r in repos))
    for fig in FIGURES:
        vals = [sum(x.get(fig, 0) for runs in seen[r].values() for x in runs) for r in repos]
        print(f"{fig:<18}" + "".join(f"{v:>24.0f}" for v in vals))


def scripted(args: argparse.Namespace, repos: list[Path]) -> int:
    """Each script on its task through a scripted server; a legitimate script's cuts are false."""
    scripts = sorted(p for p in SCRIPTS.glob("*.json") if not args.only or p.stem in args.only)
    t_start = time.monotonic()
    seen: dict[Path, dict[str, list[dict[str, float]]]] = {r: {} for r in repos}
    for repo in repos:
        print(f"CLI from {repo}")
        for path in scripts:
            run = run_script(path, repo, args)
            seen[repo][path.stem] = [run.figures]
            _say(path.stem, run)
            _dump(args.events, f"{repo.name}-{path.stem}", run)
        table(
            f"CLI from {repo}, scripted models",
            seen[repo],
            extra=("false trips",),
        )
    _totals(repos, seen)
    print(f"\nwhole run: {time.monotonic() - t_start:.0f} s wall")
    return 0


def run_script(path: Path, repo: Path, args: argparse.Namespace) -> TaskRun:
    """One scripted model on its task: `{"task": NAME, "legitimate": bool, "responses": [...]}`."""
    script: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    (task,) = load_tasks(only=(script["task"],))
    with (
        ScriptedServer(script["responses"], n_ctx=8192, supports_tools=False) as srv,
        tempfile.TemporaryDirectory(prefix="cerveau-task-") as tmp,
    ):
        run = run_task(
            task,
            srv.url,
            Path(tmp),
            repo=repo,
            max_iterations=args.max_iterations,
            max_tokens=args.max_tokens,
            timeout=args.timeout,
        )
    run.task = path.stem
    cuts = run.figures["repetition_cut"]
    run.figures["false trips"] = cuts if script.get("legitimate") else 0
    return run


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, action="append", help="a checkout whose CLI runs")
    ap.add_argument("--scripted", action="store_true", help="the scripted pathological models")
    ap.add_argument("--server", help="a running llama-server (default: start the cached stack)")
    ap.add_argument("--seeds", default="1,2,3,4,5", help="server seeds, one sample each")
    ap.add_argument("--temperature", type=float, default=0.2)
    ap.add_argument("--max-tokens", type=int, default=192, help="the reply cap")
    ap.add_argument("--max-iterations", type=int, default=3, help="rounds a turn")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds a run may take")
    ap.add_argument("--only", type=lambda s: tuple(x for x in s.split(",") if x), default=())
    ap.add_argument("--events", type=Path, help="a folder for each run's events (JSON)")
    args = ap.parse_args(argv)
    repos = [p.resolve() for p in (args.repo or [REPO])]
    return scripted(args, repos) if args.scripted else embedded(args, repos)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
