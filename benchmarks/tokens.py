"""Token counting and provider round trips. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/tokens.py                # starts the cached real stack itself
    .venv/bin/python benchmarks/tokens.py --server URL   # an already running llama-server

(1) Building the tiktoken Encoding from the GGUF (once per model file).
(2) Counting one message (~1 KB of code): local gguf-bpe vs `/tokenize` on the real server
    (uncached, one HTTP round trip each) vs the TokenCounter's cache hit; and whether the local ids
    equal the server's on every sample.
(3) Provider overhead on the scripted server: one `complete()` round trip (HTTP, SSE parsing,
    delta assembly, constrained-action parsing), median and p95 over 200 calls.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from cerveau_tui.context.tokens import TokenCounter, _load_encoding, encoding_for_gguf
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.testing.scripted_server import ScriptedServer


def timed(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def fmt(samples: list[float]) -> str:
    q = statistics.quantiles(samples, n=20)
    return f"median {statistics.median(samples):.3f} ms, p95 {q[18]:.3f} ms (n={len(samples)})"


def samples() -> list[str]:
    root = Path(__file__).resolve().parent.parent / "cerveau_tui"
    texts = []
    for path in sorted(root.rglob("*.py"))[:40]:
        text = path.read_text()
        texts += [text[i : i + 1000] for i in range(0, min(len(text), 3000), 1000)]
    return texts


def bench_tokens(url: str, gguf: str) -> None:
    _load_encoding.cache_clear()
    t = time.perf_counter()
    enc = encoding_for_gguf(gguf)
    print(
        f"(1) encoding built from {Path(gguf).name}: {(time.perf_counter() - t) * 1000:.0f} ms ({'ok' if enc else 'NOT byte-level BPE'})"
    )
    local = TokenCounter(None, gguf)
    server = LlamaProvider(url)
    counter = TokenCounter(server)
    texts = samples()
    same = sum(local.encode(x) == server.tokenize(x) for x in texts)
    print(f"(2) {len(texts)} samples of ~1 KB: local ids == server ids on {same}/{len(texts)}")
    it = iter(texts * 3)
    print(f"    gguf-bpe count:       {fmt(timed(lambda: local.count(next(it)), len(texts)))}")
    it = iter(texts)
    print(f"    /tokenize (uncached): {fmt(timed(lambda: server.tokenize(next(it)), len(texts)))}")
    for x in texts:
        counter.count(x)
    it = iter(texts)
    print(f"    server, cache hit:    {fmt(timed(lambda: counter.count(next(it)), len(texts)))}")


def bench_provider() -> None:
    tools = [
        {
            "name": "read_file",
            "description": "Read",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        }
    ]
    entry = {"tool_calls": [{"name": "read_file", "arguments": {"path": "src/app.py"}}]}
    ask = [
        {"role": "system", "content": "You are a coding agent. " * 20},
        {"role": "user", "content": "Read src/app.py"},
    ]
    for mode, supports in (("native", True), ("constrained", False)):
        with ScriptedServer({"responses": [entry] * 220}, supports_tools=supports) as srv:
            p = LlamaProvider(srv.url)
            for _ in range(20):
                p.complete(ask, tools, max_tokens=64)
            call = p.complete
            figures = fmt(timed(lambda call=call: call(ask, tools, max_tokens=64), 200))
            print(f"(3) complete() round trip, {mode:11s}: {figures}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", help="a running llama-server; default: start the cached real stack")
    ap.add_argument("--gguf", help="the model file the server runs; default: the cached SmolLM2")
    args = ap.parse_args()
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.stack.server import managed_for

    paths = stack_paths()
    loc = locate(paths)
    gguf = args.gguf or str(loc.model)
    server = None
    url = args.server
    if url is None:
        assert loc.binary is not None and loc.model is not None, (
            "no cached stack: run `cerveau stack provision`"
        )
        server = managed_for(paths, loc.binary, loc.model, n_ctx=2048)
        server.start(timeout_s=120.0)
        url = server.url
    try:
        bench_tokens(url, gguf)
    finally:
        if server is not None:
            server.stop()
    bench_provider()


if __name__ == "__main__":
    main()
