"""Fixtures for the reminder sources: a workspace, the person's config dir, a turn's context, and a
real Engine on the scripted server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import Settings, load_settings
from cerveau_tui.history import History
from cerveau_tui.hooks import Hook, TurnContext
from cerveau_tui.tools.base import ToolState


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    return d


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The person's config dir (where config.toml, AGENTS.md and skills/ live)."""
    d = tmp_path / "home"
    d.mkdir()
    return d


@pytest.fixture
def settings(ws: Path, tmp_path: Path) -> Settings:
    return load_settings(ws, environ={}, user_config=tmp_path / "none.toml")


@dataclass
class Turn:
    ctx: TurnContext
    rec: Recorder


@pytest.fixture
def turn(ws: Path, settings: Settings) -> Turn:
    bus = Emitter("test")
    rec = Recorder(bus)
    ctx = TurnContext(
        turn_id="t-1",
        iteration=1,
        workspace=ws,
        bus=bus,
        state=ToolState(),
        history=History(),
        settings=settings,
        n_ctx=4096,
    )
    return Turn(ctx, rec)


@dataclass
class Run:
    requests: list[dict[str, Any]]
    rec: Recorder
    engine: Any

    def messages(self, i: int) -> list[dict[str, Any]]:
        return list(self.requests[i]["messages"])

    def last_user(self, i: int) -> str:
        return str([m for m in self.messages(i) if m["role"] == "user"][-1]["content"])


EngineRun = Callable[..., Run]


@pytest.fixture
def engine_run(ws: Path, home: Path, settings: Settings) -> Iterator[EngineRun]:
    """Run turns through the real Engine (its loop, tools and reminders channel) against the
    scripted server: `engine_run(script, tasks, between=fn)`; `between(i)` runs after turn i."""
    from cerveau_tui.loop.approver import DenyAll
    from cerveau_tui.loop.engine import Engine
    from cerveau_tui.provider.llama import LlamaProvider
    from cerveau_tui.reminders import reminder_hooks, skill_book
    from cerveau_tui.sandbox.none import NoSandbox
    from cerveau_tui.testing.scripted_server import ScriptedServer
    from cerveau_tui.tools.registry import Registry, default_tools
    from cerveau_tui.tools.skill import LoadSkill
    from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

    servers: list[ScriptedServer] = []

    def run(
        script: list[dict[str, Any]],
        tasks: list[str],
        between: Callable[[int], None] | None = None,
        extra_hooks: list[Hook] | None = None,
        n_ctx: int = 4096,
        action_mode: str = "native",
    ) -> Run:
        srv = ScriptedServer(
            {"responses": script}, n_ctx=n_ctx, supports_tools=action_mode == "native"
        ).start()
        servers.append(srv)
        bus = Emitter("test")
        rec = Recorder(bus)
        fp = Fingerprinter(ws)
        hooks = [*reminder_hooks(settings, fp, user_dir=home), *(extra_hooks or [])]
        registry = Registry(default_tools())
        book = skill_book(hooks)
        if book is not None:  # as the session registers it
            registry.add(LoadSkill(book))
        engine = Engine(
            provider=LlamaProvider(srv.url, action_mode=action_mode),
            registry=registry,
            bus=bus,
            settings=settings,
            approver=DenyAll(),
            runner=NoSandbox(),
            hooks=hooks,
            n_ctx=n_ctx,
            fingerprinter=fp,
        )
        try:
            for i, task in enumerate(tasks):
                engine.run(task)
                engine.settle()
                if between is not None:
                    between(i)
        finally:
            engine.close()
        return Run(srv.requests, rec, engine)

    yield run
    for srv in servers:
        srv.stop()
