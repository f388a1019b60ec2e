"""MCP on the real llama-server: the prefix it costs, what a describe and a call re-read, a call's
latency. Prints figures only.

    .venv/bin/python benchmarks/mcp.py                 # starts the cached stack, -c 8192
    .venv/bin/python benchmarks/mcp.py --server URL    # a running llama-server

1. Prefix tokens with 0, 1 (mcp-server-time) and 3 (time, git, fetch) servers configured: the
   first request's prompt (the real server's `prompt_n + cache_n`), and beside it what the same
   servers' full tool schemas would cost rendered as native tools (/tokenize of their JSON).
2. A scripted turn (mcp_describe, then mcp_call, then an answer) through the cache probe
   (cerveau_tui/testing/cache_probe.py): per request, evaluated and reused tokens and what the
   prompt grew by; the cache is kept when evaluated follows appended, not the prompt.
3. A call's latency through the sandboxed server's pipes (mcp-server-time, 20 calls), beside a
   sandboxed `true` (what one bash call costs) and the server's start.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from cerveau_tui.bus import Emitter
from cerveau_tui.config import McpServerConfig, load_settings
from cerveau_tui.deny_read import deny_read_paths
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.mcp.hook import runner_factory
from cerveau_tui.mcp.hub import McpHub
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.session import build_session
from cerveau_tui.testing.cache_probe import CacheProbe
from cerveau_tui.testing.scripted_server import ScriptedServer

BIN = Path(sys.executable).parent


def servers(n: int, repo: Path) -> dict[str, dict[str, Any]]:
    every = {
        "time": {"command": str(BIN / "mcp-server-time"), "read_only": True},
        "git": {"command": str(BIN / "mcp-server-git"), "args": ["--repository", str(repo)]},
        "fetch": {"command": str(BIN / "mcp-server-fetch")},
    }
    return dict(list(every.items())[:n])


def session_requests(
    real_url: str, n_servers: int, script: list[dict[str, Any]]
) -> list[tuple[int, int]]:
    root = Path(tempfile.mkdtemp(prefix="cerveau-bench-mcp-", dir="/var/tmp"))
    ws = root / "ws"
    ws.mkdir()
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    config = root / "config.toml"
    import tomli_w

    config.write_text(tomli_w.dumps({"mcp": {"servers": servers(n_servers, ws)}}))
    settings = load_settings(ws, environ={"CERVEAU_TEMPERATURE": "0"}, user_config=config)
    with ScriptedServer(script, n_ctx=1 << 20) as srv, CacheProbe(real_url, srv.url) as probe:
        s = build_session(
            settings, bus=Emitter(), approver=ApproveAll(), provider=LlamaProvider(probe.url)
        )
        try:
            s.engine.run("what time is it in Paris?")
        finally:
            s.close()
        return [(r.prompt_n, r.cache_n) for r in probe.records if r.kind == "chat"]


def schema_tokens(real_url: str, n_servers: int) -> int:
    """The servers' full tool schemas as native tool definitions would carry them."""
    ws = Path(tempfile.mkdtemp(prefix="cerveau-bench-mcp-", dir="/var/tmp"))
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    cfg = {n: McpServerConfig(**c) for n, c in servers(n_servers, ws).items()}
    hub = hub_for(cfg, ws)
    try:
        tools = [
            {"type": "function", "function": {
                "name": f"{s}_{t.name}", "description": t.description,
                "parameters": t.input_schema}}
            for s, t in hub.catalogue()
        ]  # fmt: skip
    finally:
        hub.close()
    text = json.dumps(tools)
    from cerveau_tui.stack.keys import headers_for

    got = httpx.post(
        f"{real_url}/tokenize", json={"content": text}, headers=headers_for(real_url), timeout=60
    ).json()
    return len(got["tokens"])


def hub_for(cfg: dict[str, McpServerConfig], ws: Path) -> McpHub:
    settings = load_settings(ws, user_config=ws / "none.toml")
    make = runner_factory(settings, BubblewrapRunner(), deny_read_paths(settings.deny_read))
    return McpHub(cfg, ws, make).start()


def prefix_figures(url: str) -> None:
    print("1. prefix: the first request's prompt, tokens")
    print(f"{'servers':>7} {'prompt':>7} {'added':>6} {'full schemas (native tools)':>28}")
    base = None
    for n in (0, 1, 3):
        ev, ca = session_requests(url, n, [{"content": "done."}])[0]
        prompt = ev + ca
        base = prompt if base is None else base
        full = schema_tokens(url, n) if n else 0
        print(f"{n:>7} {prompt:>7,} {prompt - base:>6,} {full:>28,}")


def turn_figures(url: str) -> None:
    print("\n2. a describe then a call (1 server), per request")
    script = [
        {"tool_calls": [{"name": "mcp_describe",
                         "arguments": {"server": "time", "tool": "get_current_time"}}]},
        {"tool_calls": [{"name": "mcp_call", "arguments": {
            "server": "time", "tool": "get_current_time",
            "arguments": {"timezone": "Europe/Paris"}}}]},
        {"content": "It is the time the tool said."},
    ]  # fmt: skip
    rows = session_requests(url, 1, script)
    print(f"{'req':>3} {'evaluated':>9} {'reused':>7} {'prompt':>7} {'appended':>8}")
    prev = 0
    for i, (ev, ca) in enumerate(rows):
        prompt = ev + ca
        appended = prompt - prev if i else prompt
        prev = prompt
        print(f"{i:>3} {ev:>9,} {ca:>7,} {prompt:>7,} {appended:>8,}")


def latency_figures() -> None:
    print("\n3. latency (mcp-server-time, bubblewrap)")
    ws = Path(tempfile.mkdtemp(prefix="cerveau-bench-mcp-", dir="/var/tmp"))
    began = time.monotonic()
    hub = hub_for({"time": McpServerConfig(command=str(BIN / "mcp-server-time"))}, ws)
    start = time.monotonic() - began
    try:
        calls = []
        for _ in range(20):
            t = time.monotonic()
            hub.call("time", "get_current_time", {"timezone": "UTC"}, 16_000)
            calls.append((time.monotonic() - t) * 1000)
    finally:
        hub.close()
    runner = BubblewrapRunner()
    cmds = []
    for _ in range(10):
        t = time.monotonic()
        runner.run(CommandSpec("true", workspace=ws, timeout=30))
        cmds.append((time.monotonic() - t) * 1000)
    runner.kill_background()
    q = statistics.quantiles(calls, n=10)
    print(f"server start (sandboxed, initialize, tools/list): {start * 1000:,.0f} ms")
    print(f"mcp call: median {statistics.median(calls):.1f} ms, p90 {q[-1]:.1f} ms (20 calls)")
    print(f"a sandboxed `true` (one bash call): median {statistics.median(cmds):.1f} ms")


@contextmanager
def real_server(url: str | None, n_ctx: int) -> Iterator[str]:
    """`url`, else the cached stack's llama-server started for the run and stopped after."""
    if url is not None:
        yield url
        return
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.stack.server import managed_for

    paths = stack_paths()
    found = locate(paths)
    assert found.binary is not None and found.model is not None, "cerveau stack provision"
    managed = managed_for(paths, found.binary, found.model, n_ctx=n_ctx)
    managed.start(timeout_s=120.0)
    try:
        yield managed.url
    finally:
        managed.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", help="a running llama-server; else the cached stack")
    ap.add_argument("--n-ctx", type=int, default=8192, help="the started server's -c")
    args = ap.parse_args()
    with real_server(args.server, args.n_ctx) as url:
        prefix_figures(url)
        turn_figures(url)
        latency_figures()


if __name__ == "__main__":
    main()
