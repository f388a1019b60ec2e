"""What the git guard adds to every command: a snapshot before, a check after.

    .venv/bin/python benchmarks/git_guard.py [N]    # default N=20

For workspaces of 1,000 and 10,000 files (100 per folder, a `node_modules`-like depth), with and
without a repository at the root (and one nested), prints the median ms of: the name-only walk
alone, snapshot, and snapshot + check (= the overhead of GuardedRunner per command, nothing
planted, so no neutralize). Also the same through GuardedRunner(NoSandbox) vs NoSandbox running
`true`, taken in one run. Figures only, no assertions (machines are noisy).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.sandbox.command import CommandSpec  # noqa: E402
from cerveau_tui.sandbox.guarded import GuardedRunner  # noqa: E402
from cerveau_tui.sandbox.none import NoSandbox  # noqa: E402
from cerveau_tui.workspace.git.guard import check, snapshot  # noqa: E402


def median_ms(fn: Callable[[], object], n: int) -> float:
    fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def make_tree(root: Path, files: int) -> None:
    for i in range(files):
        d = root / f"pkg{i // 1000}" / f"mod{(i // 100) % 10}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.js").write_text("x")


def walk_only(ws: Path) -> int:
    n, stack = 0, [str(ws)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                n += 1
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
    return n


def git(ws: Path, *args: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ws), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    base = Path(tempfile.mkdtemp(prefix="cerveau-bench-gitguard-", dir="/var/tmp"))
    try:
        print(
            f"{'workspace':<26}{'walk':>8}{'snapshot':>10}{'snap+check':>12}{'true bare':>11}{'guarded':>9}"
        )
        for files in (1_000, 10_000):
            for repo in (False, True):
                ws = base / f"{files}-{repo}"
                ws.mkdir()
                make_tree(ws, files)
                if repo:
                    git(ws, "init", "-q")
                    (ws / "pkg0" / "nested").mkdir()
                    git(ws / "pkg0" / "nested", "init", "-q")
                plain, guarded = NoSandbox(), GuardedRunner(NoSandbox())
                walk = median_ms(lambda ws=ws: walk_only(ws), n)
                snap = median_ms(lambda ws=ws: snapshot(ws), n)
                both = median_ms(lambda ws=ws: check(ws, snapshot(ws)), n)
                bare = median_ms(lambda p=plain, ws=ws: p.run(CommandSpec("true", workspace=ws)), n)
                wrapped = median_ms(
                    lambda g=guarded, ws=ws: g.run(CommandSpec("true", workspace=ws)), n
                )
                label = f"{files:,} files, {'2 repos' if repo else 'no repo'}"
                print(
                    f"{label:<26}{walk:>8.1f}{snap:>10.1f}{both:>12.1f}{bare:>11.1f}{wrapped:>9.1f}"
                )
        print("(ms, median of", n, "; 'guarded' - 'true bare' is the per-command overhead)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
