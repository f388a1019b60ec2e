"""On the real llama-server: reminders are appended, so the server's prompt cache survives them.

The turns run through the real Engine on the scripted server (its replies are a script); every
request the harness sent is then replayed to the real llama-server with max_tokens=1 (the probe of
reference/context.md), and `timings.cache_n` says how much of it came from the KV cache. A
reminder spliced anywhere but the end would show as a request that re-evaluates what the previous
one had already evaluated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from cerveau_tui.stack.keys import headers_for

pytestmark = pytest.mark.e2e


def probe(url: str, body: dict[str, Any]) -> tuple[int, int]:
    sent = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    sent.update(stream=False, max_tokens=1, cache_prompt=True)
    # The key of the server the real_stack fixture started (stack/keys.py).
    r = httpx.post(f"{url}/v1/chat/completions", json=sent, timeout=120, headers=headers_for(url))
    r.raise_for_status()
    t = r.json()["timings"]
    return int(t["prompt_n"]), int(t.get("cache_n", 0))


def call(name: str, **arguments: Any) -> dict[str, Any]:
    import json

    return {"content": json.dumps({"tool": name, "arguments": arguments})}


def test_reminders_keep_the_prompt_cache_on_the_real_server(
    real_stack: str, ws: Path, engine_run: Any
) -> None:
    (ws / "AGENTS.md").write_text("Keep answers short.\n")
    (ws / "notes.txt").write_text("first version\n")

    def person(i: int) -> None:
        if i == 0:
            (ws / "AGENTS.md").write_text("Keep answers short. Cite the files you read.\n")
            (ws / "notes.txt").write_text("the person's second version\n")

    run = engine_run(
        [
            call("read_file", path="notes.txt"),
            {"content": '{"answer": "read it"}'},
            call("list_files", path="."),
            {"content": '{"answer": "done"}'},
        ],
        ["read notes.txt", "carry on"],
        between=person,
        action_mode="constrained",
        n_ctx=8192,
    )
    assert [e.payload["sources"] for e in run.rec.of("reminder")] == [
        ["changed_on_disk", "instructions"]
    ]
    figures = [probe(real_stack, body) for body in run.requests]
    for i, (evaluated, cached) in enumerate(figures):
        print(f"request {i}: evaluated {evaluated}, from cache {cached}")
    for (ev0, c0), (_, c1) in zip(figures, figures[1:], strict=False):
        assert c1 >= ev0 + c0 - 8, figures  # all of the previous prompt came from the cache
