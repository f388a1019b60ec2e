"""A prefill longer than the no-progress window, on the real llama-server: does the call complete?

Starts the cached llama-server with SmolLM2-135M and small batches (`-b 64`: one
`prompt_progress` chunk per 64 prompt tokens, so a CPU prefill reports often), sends one long
prompt with a window of WINDOW_S seconds, and prints how long the prefill took, how many progress
reports came and the largest gap between them. Before liveness.py the window was a total: any
prefill longer than it was lost. No assertions (the figures depend on the machine's load).

    .venv/bin/python benchmarks/slow_prefill.py [PROMPT_WORDS] [WINDOW_S]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import Delta, ProviderError
from cerveau_tui.stack.paths import stack_paths
from cerveau_tui.stack.provision import locate
from cerveau_tui.stack.server import ManagedServer


def main(words: int = 1500, window_s: float = 15.0) -> None:
    loc = locate(stack_paths())
    assert loc.binary and loc.model, "run `python -m cerveau_tui.stack provision` first"
    with tempfile.TemporaryDirectory() as tmp:
        server = ManagedServer(
            loc.binary,
            loc.model,
            n_ctx=4096,
            log_path=Path(tmp) / "log",
            extra_args=["-b", "64", "-ub", "64"],
        )
        url = server.start(timeout_s=120)
        try:
            run(url, words, window_s)
        finally:
            server.stop()


def run(url: str, words: int, window_s: float) -> None:
    p = LlamaProvider(url, deadline_s=window_s, timeout_s=window_s, max_retries=0)
    reports: list[float] = []
    t0 = time.monotonic()

    def seen(d: Delta) -> None:
        if d.prompt_done and not d.tokens:
            reports.append(time.monotonic() - t0)

    ask = [{"role": "user", "content": "word " * words}]
    try:
        done = p.complete(ask, [], max_tokens=4, on_delta=seen)
        outcome = f"completed; server's prompt_n {done.timings.prompt_n if done.timings else '?'}"
    except ProviderError as exc:
        outcome = f"stopped: {exc.message}"
    took = time.monotonic() - t0
    gaps = [b - a for a, b in zip(reports, reports[1:], strict=False)]
    print(f"window {window_s:g} s, prompt of {words} words: {outcome}")
    print(
        f"call took {took:.1f} s ({took / window_s:.1f}x the window); {len(reports)} progress "
        f"reports, largest gap {max(gaps, default=0.0):.1f} s"
    )


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 1500, float(args[1]) if len(args) > 1 else 15.0)
