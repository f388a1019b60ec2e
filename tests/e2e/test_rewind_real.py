"""A rewind costs no re-evaluation, on the real llama-server (SmolLM2-135M): a long turn, a
second turn, a rewind of both to the second turn's start, one more turn. The first request after
the rewind is a prefix the server has evaluated plus the new task, so its `prompt_n` (tokens
evaluated) is the new task's few, and its `cache_n` the whole cut history. Token counts only.

The second test measures it through the cache probe (cerveau_tui/testing/rewind_probe.py: turns
that use the file tools and a command; a live rewind, then `cerveau rewind` as its own process
and `run --resume last`) and prints the figure (`pytest -s` not needed: it is said to the
terminal whatever the capture)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.protocol import EventType
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session

pytestmark = pytest.mark.e2e

LONG = "Remember the quiet harbour and its boats. " * 30  # ~300 tokens


def _stack() -> Any:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import ProvisionError, locate

    try:
        loc = locate(stack_paths())
    except ProvisionError:
        loc = None
    if loc is None or not loc.ready or loc.binary is None or loc.model is None:
        msg = "real llama-server stack missing; run `python -m cerveau_tui.stack provision`"
        if os.environ.get("CERVEAU_REQUIRE_E2E") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return loc


def test_the_first_request_after_a_rewind_evaluates_only_the_new_task(tmp_path: Path) -> None:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.server import managed_for

    loc = _stack()
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


def test_through_the_cache_probe_a_rewind_costs_the_new_task_only_live_and_resumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.server import managed_for
    from cerveau_tui.testing import rewind_probe

    loc = _stack()
    server = managed_for(stack_paths(tmp_path / "cache"), loc.binary, loc.model, 4096)
    server.start(timeout_s=120.0)
    try:
        costs = [
            rewind_probe.live(server.url, tmp_path),
            rewind_probe.resumed(server.url, tmp_path),
        ]
    finally:
        server.stop()
    with capsys.disabled():
        for cost in costs:
            print("\n[rewind, real llama-server] " + cost.line())
    for cost in costs:
        a = cost.after
        assert a.status == 200 and a.messages == cost.cut_messages + 2  # system + cut + task
        assert cost.cut_messages == cost.turn2_first.messages - 2  # turn 1's exchange alone
        # The whole cut history came from the cache: at least turn 2's first request's reused
        # part (system + turn 1), and only the new task's few tokens were evaluated.
        assert a.cache_n >= cost.turn2_first.cache_n - 16, cost.line()
        assert a.prompt_n < 40, cost.line()
