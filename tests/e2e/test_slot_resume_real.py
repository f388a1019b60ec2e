"""Instant resume on the real llama-server (SmolLM2-135M): a turn, its slot saved at turn end,
the server killed and a new one started (the app's own server dies with the app), the session
resumed; the first request's `cache_n` says whether the conversation was read again. Then the
control: the saved slot forgotten, the same restart reads everything. Token counts only."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import Settings, load_settings
from cerveau_tui.protocol import EventType
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session

pytestmark = pytest.mark.e2e

#: ~300 tokens: enough that a restored prefix and a full re-read cannot be confused.
LONG = "Remember the quiet harbour and its boats. " * 30


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Any]:
    """Starts the app's own server as the app does (managed_for: the slot folder and the last
    port under the cache dir), from the real stack's binary and model."""
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import ProvisionError, locate
    from cerveau_tui.stack.server import ManagedServer, managed_for

    try:
        loc = locate(stack_paths())
    except ProvisionError:
        loc = None
    if loc is None or not loc.ready or loc.binary is None or loc.model is None:
        msg = "real llama-server stack missing; run `python -m cerveau_tui.stack provision`"
        if os.environ.get("CERVEAU_REQUIRE_E2E") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    started: list[ManagedServer] = []

    def start() -> ManagedServer:
        assert loc is not None and loc.binary is not None and loc.model is not None
        server = managed_for(stack_paths(tmp_path / "cache"), loc.binary, loc.model, 2048)
        server.start(timeout_s=120.0)
        started.append(server)
        return server

    yield start
    for s in started:
        s.stop()


def _settings(ws: Path) -> Settings:
    # One round a turn: the 135M model's answer does not matter, the prompt's cache does.
    env = {"CERVEAU_TEMPERATURE": "0", "CERVEAU_MAX_TOKENS": "16"}
    settings = load_settings(ws, environ=env, user_config=ws.parent / "none.toml")
    settings.cache_dir = ws.parent / "cache"
    settings.limits.max_iterations = 1
    return settings


def _turn(ws: Path, url: str, task: str, resume: str | None = None) -> tuple[str, Recorder]:
    bus = Emitter()
    rec = Recorder(bus)
    s = build_session(_settings(ws), bus=bus, provider=LlamaProvider(url), resume=resume)
    try:
        s.engine.run(task)
        return s.bus.session_id, rec
    finally:
        s.close()


def _first_cache_n(rec: Recorder) -> int:
    return int(rec.of(EventType.USAGE)[0].payload["cache_n"])


def test_a_resume_on_a_restarted_server_reads_its_conversation_from_the_saved_slot(
    tmp_path: Path, start_server: Any
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    server = start_server()
    sid, first = _turn(ws, server.url, LONG + "\nSay hello.")
    assert first.of(EventType.TURN_ENDED)[-1].payload["prompt_evaluated"] > 250
    server.stop()
    record = tmp_path / "cache" / "slot-records" / f"{sid}.json"
    assert record.is_file(), "no slot was saved at turn end"

    server = start_server()
    _, resumed = _turn(ws, server.url, "Say goodbye.", resume=sid)
    server.stop()
    assert _first_cache_n(resumed) > 250, [e.payload for e in resumed.of(EventType.NOTICE)]

    record.unlink()  # the control: the same restart without the saved slot
    server = start_server()
    _, control = _turn(ws, server.url, "Say it again.", resume=sid)
    assert _first_cache_n(control) == 0
