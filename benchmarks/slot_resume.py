"""The first resumed request after a server restart, with and without the saved slot (issue 23).
Prints figures; asserts nothing.

    .venv/bin/python benchmarks/slot_resume.py [--tokens 3000] [--n-ctx 8192]

On the real stack (SmolLM2-135M), started as the app starts its own (managed_for: slot folder and
last port under a fresh cache dir): one turn whose prompt is ~`--tokens` long (the history a long
session would have), its slot saved at turn end; the server stopped and started again (the app's
own server dies with the app); the session resumed and one more turn run. Printed: the first
resumed request's prompt_n (evaluated) and cache_n (reused), restored from the slot, then again
with the saved slot forgotten (the control), and the wall time of each first request.
Before (issue 23): 3,599 of 3,599 prompt tokens evaluated on the first request after a restart.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.protocol import EventType
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.stack.paths import stack_paths
from cerveau_tui.stack.provision import locate
from cerveau_tui.stack.server import managed_for

SENTENCE = "The harbour was quiet and the boats were tied up for the night. "  # ~14 tokens


def turn(
    ws: Path, url: str, task: str, resume: str | None = None
) -> tuple[str, dict[str, Any], float]:
    env = {"CERVEAU_TEMPERATURE": "0", "CERVEAU_MAX_TOKENS": "16"}
    settings = load_settings(ws, environ=env, user_config=ws.parent / "none.toml")
    settings.cache_dir = ws.parent / "cache"
    settings.limits.max_iterations = 1
    bus = Emitter()
    rec = Recorder(bus)
    s = build_session(settings, bus=bus, provider=LlamaProvider(url), resume=resume)
    try:
        t = time.perf_counter()
        s.engine.run(task)
        took = time.perf_counter() - t
        return s.bus.session_id, dict(rec.of(EventType.USAGE)[0].payload), took
    finally:
        s.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=3000, help="the first prompt's size, about")
    ap.add_argument("--n-ctx", type=int, default=8192)
    args = ap.parse_args()
    loc = locate(stack_paths())
    assert loc.binary is not None and loc.model is not None, "run `cerveau stack provision`"
    root = Path(tempfile.mkdtemp(prefix="cerveau-bench-slots-"))
    ws = root / "ws"
    ws.mkdir()
    paths = stack_paths(root / "cache")

    def on_server(task: str, resume: str | None = None) -> tuple[str, dict[str, Any], float]:
        assert loc.binary is not None and loc.model is not None
        server = managed_for(paths, loc.binary, loc.model, args.n_ctx)
        server.start(timeout_s=120.0)
        try:
            return turn(ws, server.url, task, resume)
        finally:
            server.stop()

    history = SENTENCE * max(1, args.tokens // 14) + "\nSay hello."
    sid, first, took = on_server(history)
    print(f"first turn: prompt_n {first['prompt_n']:,} cache_n {first['cache_n']:,} ({took:.1f} s)")
    _, restored, took = on_server("Say goodbye.", resume=sid)
    print(
        f"resumed, slot restored: prompt_n {restored['prompt_n']:,} cache_n "
        f"{restored['cache_n']:,} ({took:.1f} s for the turn)"
    )
    (paths.slot_records_dir / f"{sid}.json").unlink()
    _, control, took = on_server("Say it again.", resume=sid)
    print(
        f"resumed, no saved slot:  prompt_n {control['prompt_n']:,} cache_n "
        f"{control['cache_n']:,} ({took:.1f} s for the turn)"
    )


if __name__ == "__main__":
    main()
