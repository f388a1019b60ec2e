"""What the git guard adds to each file-tool write (workspace/git/change.py).

    .venv/bin/python benchmarks/file_tool_guard.py [N]    # default N=40

A small repository (one commit, 60 files, core.hooksPath = .husky with one hook, a nested
repository in `vendor/lib`), and `write_file` through its ToolContext, as the session runs it,
at depth 1, 3 and inside the nested repository: the median ms per write with the guard and with
the guard replaced by one that only applies the write, taken alternately in one run, and their
ratio. The first guarded write of a workspace also takes the one full snapshot (the index of
repositories); it is measured apart. Figures only, no assertions (machines are noisy).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.tools import files  # noqa: E402
from cerveau_tui.tools.base import ToolContext, ToolState  # noqa: E402
from cerveau_tui.tools.files import WriteFile  # noqa: E402
from cerveau_tui.workspace.git.change import ChangeGuard, Verdict, guard_for  # noqa: E402


class Unguarded:
    """The write alone: what a write cost before the guard."""

    def change(self, paths: Any, apply: Callable[[], Any]) -> tuple[Any, Verdict]:
        return apply(), Verdict()


def git(cwd: Path, *args: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b"}
    env |= {"GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_repo(ws: Path) -> None:
    for i in range(60):
        p = ws / "src" / f"pkg{i // 20}" / f"m{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"x = {i}\n")
    (ws / ".husky").mkdir()
    (ws / ".husky" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (ws / ".husky" / "pre-commit").chmod(0o755)
    git(ws, "init", "-q", "-b", "main")
    git(ws, "config", "core.hooksPath", ".husky")
    (ws / "vendor" / "lib").mkdir(parents=True)
    (ws / "vendor" / "lib" / "a.py").write_text("a = 1\n")
    git(ws / "vendor" / "lib", "init", "-q", "-b", "main")
    git(ws / "vendor" / "lib", "add", "-A")
    git(ws / "vendor" / "lib", "commit", "-qm", "lib")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    root = Path(tempfile.mkdtemp(prefix="cerveau-bench-", dir="/var/tmp"))
    try:
        ws = root / "ws"
        ws.mkdir()
        make_repo(ws)
        ctx = ToolContext(workspace=ws, state=ToolState())
        tool = WriteFile()
        real: Callable[[Any], Any] = files.guard_for

        def write(rel: str, i: int) -> None:
            tool.run(WriteFile.Args(path=rel, content=f"y = {i}\n"), ctx)

        guard = guard_for(ws)
        t0 = time.perf_counter()
        guard._watchers([str(ws / "src" / "x.py")])  # the one full snapshot, on first use
        first = (time.perf_counter() - t0) * 1000
        print(f"first write's index snapshot (once per workspace): {first:.1f} ms")
        print(f"{'path':34} {'unguarded':>10} {'guarded':>10} {'ratio':>7}")
        for rel in ("notes.md", "src/pkg1/sub/deep/m.py", "vendor/lib/b.py"):
            times: dict[str, list[float]] = {"off": [], "on": []}
            for i in range(n):
                for mode in ("off", "on"):
                    files.guard_for = real if mode == "on" else (lambda ws: Unguarded())  # type: ignore[assignment]
                    t0 = time.perf_counter()
                    write(rel, i)
                    times[mode].append((time.perf_counter() - t0) * 1000)
            files.guard_for = real  # type: ignore[assignment]
            off, on = statistics.median(times["off"]), statistics.median(times["on"])
            print(f"{rel:34} {off:8.2f}ms {on:8.2f}ms {on / off:6.1f}x")
        assert isinstance(guard, ChangeGuard)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
