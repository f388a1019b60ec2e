"""A rewind costs no re-evaluation, on the real llama-server (SmolLM2-135M): a long turn, a
second turn, a rewind of both to the second turn's start, one more turn. The first request after
the rewind is a prefix the server has evaluated plus the new task, so its `prompt_n` (tokens
evaluated) is the new task's few, and its `cache_n` the whole cut history. Token counts only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.protocol import EventType
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session

pytestmark = pytest.mark.e2e

LONG = "Remember the quiet harbour and its boats. " * 30  # ~300 tokens


def test_the_first_request_after_a_rewind_evaluates_only_the_new_task(tmp_path: Path) -> None:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import ProvisionError, locate
    from cerveau_tui.stack.server import managed_for

    try:
        loc = locate(stack_paths())
    except ProvisionError:
        loc = None
    if loc is None or not loc.ready or loc.binary is None or loc.model is None:
        msg = "real llama-server stack missing; run `python -m cerveau_tui.stack provision`"
        if os.environ.get("CERVEAU_REQUIRE_E2E") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    ws = tmp_path / "ws"
    ws.mkdir()
    server = managed_for(stack_paths(tmp_path / "cache"), loc.binary, loc.model, 2048)
    server.start(timeout_s=120.0)
    try:
        env = {"CERVEAU_TEMPERATURE": "0", "CERVEAU_MAX_TOKENS": "16"}
        settings = load_settings(ws, environ=env, user_config=tmp_path / "none.toml")
        settings.cache_dir = tmp_path / "cache"
        settings.limits.max_iterations = 1
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, provider=LlamaProvider(server.url))
        try:
            s.engine.run(LONG + "\nSay hello.")
            s.engine.run("Say goodbye.")
            n = len(rec.of(EventType.USAGE))
            assert s.rewinder is not None
            s.rewinder.rewind(2, "both")
            s.engine.run("Say it another way.")
            after = rec.of(EventType.USAGE)[n].payload
        finally:
            s.close()
    finally:
        server.stop()
    # The cut history (system + the long turn) is reused whole; only the new task is read.
    assert int(after["cache_n"]) > 250
    assert int(after["prompt_n"]) < 40
