"""What a person's hook costs per run: `true` as a hook (the wrapper, the event on stdin, the
stderr kept apart) vs `true` as a plain command, through the same runner, sandboxed and on the host.

    .venv/bin/python benchmarks/hook_overhead.py [N]    # default N=30

Prints the median wall time of each and the hook's overhead over the command (the wrapper's
shell, mktemp, head, the JSON event), with a 60 KiB event (a large post_tool output) beside a
small one. Figures only: no assertions (these machines are noisy).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.bus import Emitter  # noqa: E402
from cerveau_tui.config import HookConfig, load_settings  # noqa: E402
from cerveau_tui.person_hooks.run import HookRunner  # noqa: E402
from cerveau_tui.sandbox.command import CommandSpec  # noqa: E402
from cerveau_tui.sandbox.select import select_runner  # noqa: E402


def median_ms(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    ws = Path(tempfile.mkdtemp(prefix="cerveau-hook-bench-", dir="/var/tmp"))
    runner = select_runner(load_settings(ws, environ={}, user_config=ws / "none.toml"))
    hooks = HookRunner(runner, ws, "workspace-write", Emitter())
    small = {"tool": {"name": "bash", "arguments": {"command": "ls"}}}
    large = {"result": {"output": "x" * 60_000}}
    print(f"backend: {runner.backend} (enforced: {runner.enforced}), N={n}, medians in ms")
    for where, mode in (("sandbox", "workspace-write"), ("host", "full-access")):
        hook = HookConfig(command=["true"], where=where)  # type: ignore[arg-type]
        bare = median_ms(lambda: runner.run(CommandSpec("true", ws, mode=mode)), n)  # noqa: B023
        h_small = median_ms(lambda: hooks.run(hook, "pre_tool", small), n)  # noqa: B023
        h_large = median_ms(lambda: hooks.run(hook, "post_tool", large), n)  # noqa: B023
        print(
            f"{where:8} command {bare:7.1f}   hook {h_small:7.1f} (+{h_small - bare:.1f})   "
            f"hook, 60 KiB event {h_large:7.1f} (+{h_large - bare:.1f})"
        )


if __name__ == "__main__":
    main()
