"""The context window over a long turn, on the real llama-server. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/context.py                 # starts the cached stack with -c 4096
    .venv/bin/python benchmarks/context.py --server URL    # a running llama-server (its own -c)
    .venv/bin/python benchmarks/context.py --no-summary    # the brief instead of model summaries
    .venv/bin/python benchmarks/context.py --summary-tokens 256   # a smaller summary cap
    .venv/bin/python benchmarks/context.py --rounds 100 --n-ctx 8192   # issue 36's long session
    .venv/bin/python benchmarks/context.py --rounds 100 --n-ctx 8192 --cache-reuse 0   # reuse off
    .venv/bin/python benchmarks/context.py --rounds 100 --n-ctx 8192 --compare-cache-reuse 128
                      # the same long turn on a server without and with `--cache-reuse N` (issue 23)

The started server runs with the app's own `--cache-reuse` (stack/server.py, CACHE_REUSE_TOKENS)
unless `--cache-reuse N` says otherwise (0: off). Per compaction it prints what the next request
evaluated: appended + the summary (what stands for the dropped rounds) + what the server read
again; and the total against the physical limit (issue 36: <= 1.3x).

(1) A 31-round scripted turn (one ~1.1 KB write_file per round, as measured in
    reference/context.md) through the cache probe (cerveau_tui/testing/cache_probe.py): per request
    the tokens the real server evaluated (prompt_n) and reused (cache_n); median and total; the
    ratio evaluated / appended, where "appended" is what the stored history gained since the
    previous request (counted with the model's tokenizer); the occupancy after each compaction.
(2) Packing time for a 32k-token history: Window.fit + Window.messages with the model's tokenizer,
    the first call (every message counted) and the steady state (one round appended per call).
Targets (issue 12): median evaluated <= 1.5x a round's new tokens; ratio < 1.6; window 40-90% full
after compaction; packing < 10 ms. Before (context.md): 33,194 evaluated in total, rounds 4-31
re-evaluated 1,033-1,196 tokens each.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.context.pack import message_tokens
from cerveau_tui.context.tokens import TokenCounter
from cerveau_tui.context.window import Window, WindowState
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.protocol import EventType
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.cache_probe import CacheProbe, ProbeRecord, summarise_records
from cerveau_tui.testing.scripted_server import ScriptedServer

TASK = "Write the notes f00.txt to f30.txt, one paragraph each, then say done."
PARAGRAPH = (
    "The window keeps its prefix byte-identical between compactions, so each request evaluates "
    "only what was appended since the previous one. "
) * 8  # ~1.1 KB


def write(i: int) -> dict[str, Any]:
    args = {"path": f"f{i:02d}.txt", "content": PARAGRAPH}
    return {"tool_calls": [{"name": "write_file", "arguments": args}]}


def long_turn(real_url: str, rounds: int, summarise: bool, summary_tokens: int) -> dict[str, Any]:
    script = {"responses": [*(write(i) for i in range(rounds)), {"content": "done"}]}
    ws = Path(tempfile.mkdtemp(prefix="cerveau-bench-ctx-"))
    env = {
        "CERVEAU_LIMITS__MAX_ITERATIONS": str(rounds + 10),
        "CERVEAU_TEMPERATURE": "0",
        "CERVEAU_CONTEXT__SUMMARISE": "true" if summarise else "false",
        "CERVEAU_CONTEXT__SUMMARY_MAX_TOKENS": str(summary_tokens),
        "CERVEAU_DONE__GATE": '"off"',
    }
    settings = load_settings(ws, environ=env, user_config=ws / "none.toml")
    bus = Emitter()
    rec = Recorder(bus)
    with ScriptedServer(script, n_ctx=1 << 20) as srv, CacheProbe(real_url, srv.url) as probe:
        s = build_session(
            settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(probe.url)
        )
        lengths: list[int] = []  # len(history) at each reply: the messages that request held
        # At each compaction: how many chat requests came before it, and the tokens of what
        # stands for the dropped rounds (the handoff's question and answer, or the brief).
        marks: list[tuple[int, int]] = []
        count = s.engine.count_tokens

        def seen(ev: Any) -> None:
            if ev.type == EventType.USAGE and ev.payload.get("prompt_tokens"):
                lengths.append(len(s.engine.history))
            elif ev.type == EventType.COMPACTED:
                w = s.engine.loop_state.window
                block = w.frozen[w.block_start : w.block_end]
                chats = sum(1 for x in probe.records if x.kind == "chat")
                marks.append((chats, sum(message_tokens(m, count) for m in block)))

        bus.subscribe(seen)
        out = s.engine.run(TASK)
        history = list(s.engine.history)
        n_ctx = s.engine.n_ctx
        source = s.parts.model.token_source
        s.close()
    appended, prev = [], 0
    for n in lengths:
        appended.append(sum(message_tokens(m, count) for m in history[prev:n]))
        prev = n
    return {
        "outcome": out.reason,
        "records": probe.records,
        "appended": appended,
        "compactions": [e.payload for e in rec.of(EventType.COMPACTED)],
        "marks": marks,
        "n_ctx": n_ctx,
        "tokenizer": source,
    }


def totals(r: dict[str, Any]) -> tuple[int, int]:
    """(evaluated, appended) over the turn's chat requests, as report_turn counts them."""
    chats = [x for x in r["records"] if x.kind == "chat" and x.status == 200]
    appended = list(r["appended"])
    if appended and chats:
        appended[0] = chats[0].prompt_n + chats[0].cache_n
    return sum(x.prompt_n for x in chats), sum(appended)


def limit_of(r: dict[str, Any]) -> tuple[int, int]:
    """(every token the real server evaluated, summary calls included; the physical limit: each
    request evaluating only what the history gained since the one before, plus at each
    compaction what stands for the dropped rounds, the summary)."""
    evaluated = sum(x.prompt_n for x in r["records"] if x.status == 200)
    return evaluated, totals(r)[1] + sum(block for _, block in r["marks"])


def rereads(r: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """Per compaction, the first chat request after it: (evaluated, appended, summary tokens,
    re-read = evaluated - appended - summary: what the server read again of what it had)."""
    chats = [x for x in r["records"] if x.kind == "chat" and x.status == 200]
    appended = list(r["appended"])
    out = []
    for before, block in r["marks"]:
        if before < len(chats):
            x, a = chats[before], appended[before] if before < len(appended) else 0
            out.append((x.prompt_n, a, block, max(0, x.prompt_n - a - block)))
    return out


def report_turn(r: dict[str, Any]) -> None:
    records: list[ProbeRecord] = r["records"]
    chats = [x for x in records if x.kind == "chat" and x.status == 200]
    summaries = [x for x in records if x.kind == "summary"]
    refused = [x for x in records if x.status != 200]
    s = summarise_records(records)
    print(f"(1) outcome {r['outcome']}, n_ctx {r['n_ctx']}, tokenizer {r['tokenizer']}")
    print(
        f"    {len(chats)} chat requests, {len(summaries)} summary calls, "
        f"{len(refused)} refused by the server"
    )
    print("    request  messages  prompt_n  cache_n  appended")
    appended = list(r["appended"])
    if appended and chats:
        # Everything in the first request is new to the server (the system prompt, the tools).
        appended[0] = chats[0].prompt_n + chats[0].cache_n
    for i, x in enumerate(chats):
        a = appended[i] if i < len(appended) else 0
        print(f"    {i + 1:7d}  {x.messages:8d}  {x.prompt_n:8,d}  {x.cache_n:7,d}  {a:8,d}")
    for x in summaries:
        print(f"    summary call: prompt_n {x.prompt_n:,}, cache_n {x.cache_n:,}")
    total_appended = sum(appended)
    rounds = appended[1:] or [1]
    round_new = statistics.median(rounds)
    print(
        f"    total prompt_n {s['total_prompt_n']:,} (summaries included), "
        f"median per chat request {statistics.median(x.prompt_n for x in chats):,.0f}"
    )
    print(
        f"    appended in all {total_appended:,}; a round's new tokens (median) {round_new:,.0f}; "
        f"ratio evaluated/appended {s['total_prompt_n'] / max(1, total_appended):.2f}; "
        f"median evaluated / round's new {statistics.median(x.prompt_n for x in chats) / round_new:.2f}x"
    )
    print(f"    cache share {s['cache_share']:.1%}")
    for c in r["compactions"]:
        print(
            f"    compaction ({c['reason']}, {c['summary_source']}): {c['tokens_before']:,} -> "
            f"{c['tokens_after']:,} tokens, {c['tokens_after'] / r['n_ctx']:.0%} of n_ctx, "
            f"{c['dropped_rounds']} rounds dropped, {c['pruned']} pruned"
        )
    for i, (ev, a, block, again) in enumerate(rereads(r), start=1):
        print(
            f"    compaction {i}: the next request evaluated {ev:,} = appended {a:,} + summary "
            f"{block:,} + re-read {again:,}"
        )
    evaluated, limit = limit_of(r)
    print(
        f"    evaluated {evaluated:,} (summary calls included) for a physical limit of {limit:,} "
        f"(appended + each compaction's summary): {evaluated / max(1, limit):.2f}x the limit"
    )
    # The real server's own view of the request right after each compaction.
    after = _after_compaction(chats, r["compactions"])
    if after:
        print(
            "    real prompt size at the first request after each compaction: "
            + ", ".join(f"{n:,} ({n / r['n_ctx']:.0%})" for n in after)
        )


def _after_compaction(chats: list[ProbeRecord], compactions: list[dict[str, Any]]) -> list[int]:
    """Requests whose cache broke (cache_n well below the previous request's size) follow a
    compaction; their prompt_n + cache_n is what the real window held then."""
    out, prev = [], 0
    for x in chats:
        size = x.prompt_n + x.cache_n
        if prev and size < prev:
            out.append(size)
        prev = size
    return out


def packing(gguf: str | None) -> None:
    counter = TokenCounter(None, gguf)
    count = counter.count
    history: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    i = 0
    while sum(message_tokens(m, count) for m in history) < 32_000:
        history += _round(i)
        i += 1
    cold = [dict(m) for m in history]  # new objects: nothing memoised yet
    w = Window(WindowState(), count=count, high_water=0.85, low_water=0.5)
    t = time.perf_counter()
    w.fit("system", cold, budget=40_000, request=TASK)
    w.messages("system", cold)
    first = (time.perf_counter() - t) * 1000
    steady = []
    for j in range(50):
        cold += _round(1000 + j)
        t = time.perf_counter()
        w.fit("system", cold, budget=10**6, request=TASK)
        w.messages("system", cold)
        steady.append((time.perf_counter() - t) * 1000)
    print(
        f"(2) packing a {sum(message_tokens(m, count) for m in history):,}-token history "
        f"({len(history)} messages, tokenizer {counter.source}): first call {first:.1f} ms "
        f"(every message counted), then median {statistics.median(steady):.3f} ms per call"
    )


def _round(i: int) -> list[dict[str, Any]]:
    import json

    args = json.dumps({"path": f"f{i}.txt", "content": PARAGRAPH})
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "write_file", "arguments": args},
    }
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": f"wrote {len(PARAGRAPH)} bytes"},
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", help="a running llama-server; else the cached stack, -c 4096")
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--no-summary", action="store_true")
    ap.add_argument(
        "--summary-tokens", type=int, default=1024, help="the summary's cap (generation is slow)"
    )
    ap.add_argument("--n-ctx", type=int, default=4096, help="the started server's -c")
    ap.add_argument(
        "--cache-reuse", type=int, default=None, help="start it with --cache-reuse N (0: off)"
    )
    ap.add_argument(
        "--compare-cache-reuse",
        type=int,
        default=0,
        metavar="N",
        help="run the turn on a server without, then with --cache-reuse N, and compare",
    )
    args = ap.parse_args()
    if args.compare_cache_reuse:
        compare_cache_reuse(args)
        return
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.stack.server import managed_for

    paths = stack_paths()
    loc = locate(paths)
    server = None
    url = args.server
    if url is None:
        assert loc.binary is not None and loc.model is not None, "run `cerveau stack provision`"
        server = managed_for(paths, loc.binary, loc.model, n_ctx=args.n_ctx)
        if args.cache_reuse is not None:
            server.cache_reuse = args.cache_reuse
        server.start(timeout_s=120.0)
        url = server.url
    try:
        report_turn(long_turn(url, args.rounds, not args.no_summary, args.summary_tokens))
        packing(str(loc.model) if loc.model else None)
    finally:
        if server is not None:
            server.stop()


def compare_cache_reuse(args: argparse.Namespace) -> None:
    """The same scripted turn on two fresh servers: without and with `--cache-reuse N`."""
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.stack.server import managed_for

    paths = stack_paths()
    loc = locate(paths)
    assert loc.binary is not None and loc.model is not None, "run `cerveau stack provision`"
    figures = []
    for reuse in (0, args.compare_cache_reuse):
        server = managed_for(paths, loc.binary, loc.model, n_ctx=args.n_ctx)
        server.cache_reuse = reuse
        server.start(timeout_s=120.0)
        try:
            t = time.perf_counter()
            r = long_turn(server.url, args.rounds, not args.no_summary, args.summary_tokens)
            took = time.perf_counter() - t
        finally:
            server.stop()
        print(f"--- --cache-reuse {reuse or 'off'}")
        report_turn(r)
        evaluated, appended = totals(r)
        figures.append((reuse, evaluated, appended, took))
    for reuse, evaluated, appended, took in figures:
        print(
            f"cache-reuse {reuse or 'off':>4}: {evaluated:,} evaluated for {appended:,} appended "
            f"({evaluated / max(1, appended):.2f}x), {took:.0f} s wall"
        )


if __name__ == "__main__":
    main()
