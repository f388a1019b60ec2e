"""A done-ladder turn on the real llama-server: what each request re-read. Prints figures only.

    .venv/bin/python benchmarks/ladder_cache.py                 # starts the cached stack, -c 4096
    .venv/bin/python benchmarks/ladder_cache.py --server URL    # a running llama-server
    .venv/bin/python benchmarks/ladder_cache.py --mode constrained   # default: native tools
    .venv/bin/python benchmarks/ladder_cache.py --scripted   # no real server: the scripted one's

Issue 36: a turn whose model claims "done" with the check red (8 requests, parked) re-read its
whole prompt at each rung (938, then 1,933, then 2,721 tokens for 0-783 appended), because R1's
round offered only the read tools and native tools are rendered into the prompt's prefix. Now a
rung refuses calls instead (loop/narrow.py). The turn is scripted (the check is pytest on a
tiny project whose tests stay red: a write in R1's read-only round is refused) and goes through the cache probe
(cerveau_tui/testing/cache_probe.py), which replays each request to the real server and reads its
`timings.prompt_n` (evaluated) and `cache_n` (reused). Per request: evaluated, reused, the prompt,
and what it grew by since the request before (appended); the turn's evaluated / appended.
Run it at a commit before c4026df to see the old figures (PYTHONPATH=<a worktree there>).

Measured (2 cores, shared): with --scripted (a template rendering the tools first), before
c4026df R1's round re-read 885 then 1,568 tokens, 3,145 evaluated for 1,374 appended (2.29x);
after, 1,173 for 1,170 (1.00x). On the embedded SmolLM2-135M server both are 1.00x: its template
renders no tools in native mode, and constrained mode already kept its system message.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.cache_probe import CacheProbe
from cerveau_tui.testing.scripted_server import ScriptedServer

GATE = f"PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_mul():\n    assert mul(2, 4) == 8\n"
)


def _write(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x\n"}}]}


def ladder_turn(real_url: str | None, mode: str) -> list[tuple[int, int]]:
    """(evaluated, reused) per chat request of one parked done-ladder turn; `real_url` None: the
    scripted server's own figures (its template renders the tools first, as a tool-calling
    model's template does)."""
    script = [{"content": "done"}, _write("calc.py"), *[{"content": "done"}] * 8]
    ws = Path(tempfile.mkdtemp(prefix="cerveau-bench-ladder-"))
    (ws / "calc.py").write_text(CALC)
    (ws / "test_calc.py").write_text(TESTS)
    env = {"CERVEAU_TEMPERATURE": "0"}
    flags = {"done": {"gate": GATE, "max_stall_cycles": 1}}
    settings = load_settings(ws, flags=flags, environ=env, user_config=ws / "none.toml")
    bus = Emitter()
    seen: list[tuple[int, int]] = []
    bus.subscribe(
        lambda e: (
            seen.append((e.payload["prompt_n"], e.payload["cache_n"]))
            if e.type == "usage" and e.payload.get("prompt_tokens")
            else None
        )
    )
    with ExitStack() as stack:
        srv = stack.enter_context(ScriptedServer(script, n_ctx=1 << 20))
        probe = stack.enter_context(CacheProbe(real_url, srv.url)) if real_url else None
        url = probe.url if probe is not None else srv.url
        s = build_session(
            settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(url, action_mode=mode)
        )
        try:
            out = s.engine.run("make the tests pass")
        finally:
            s.close()
        print(f"turn ended: {out.reason}")
        if probe is None:
            return seen
        return [(r.prompt_n, r.cache_n) for r in probe.records if r.kind == "chat"]


def report(rows: list[tuple[int, int]]) -> None:
    print(f"{'req':>3} {'evaluated':>9} {'reused':>7} {'prompt':>7} {'appended':>8}")
    prev = 0
    total_eval = total_app = 0
    for i, (ev, ca) in enumerate(rows):
        prompt = ev + ca
        appended = prompt - prev if i else prompt
        prev = prompt
        if i:  # the first request reads the session's prefix once, whatever the harness does
            total_eval, total_app = total_eval + ev, total_app + max(0, appended)
        print(f"{i:>3} {ev:>9,} {ca:>7,} {prompt:>7,} {appended:>8,}")
    ratio = total_eval / total_app if total_app else float("nan")
    print(
        f"after the first request: evaluated {total_eval:,} for {total_app:,} appended ({ratio:.2f}x)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", help="a running llama-server; else the cached stack")
    ap.add_argument("--n-ctx", type=int, default=4096, help="the started server's -c")
    ap.add_argument("--mode", default="native", choices=("auto", "native", "constrained"))
    ap.add_argument(
        "--scripted", action="store_true", help="the scripted server's figures, no real server"
    )
    args = ap.parse_args()
    server = None
    url = args.server
    if args.scripted:
        print(f"action mode: {args.mode} (scripted server's figures)")
        report(ladder_turn(None, args.mode))
        return
    if url is None:
        from cerveau_tui.stack.paths import stack_paths
        from cerveau_tui.stack.provision import locate
        from cerveau_tui.stack.server import managed_for

        paths = stack_paths()
        loc = locate(paths)
        assert loc.binary is not None and loc.model is not None, "run `cerveau stack provision`"
        server = managed_for(paths, loc.binary, loc.model, n_ctx=args.n_ctx)
        server.start(timeout_s=120.0)
        url = server.url
    try:
        print(f"action mode: {args.mode}")
        report(ladder_turn(url, args.mode))
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
