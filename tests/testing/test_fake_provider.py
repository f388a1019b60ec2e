"""The in-process fake provider is a whole Provider: a session runs on it with no server, and
what the session asks of a provider (its mode, its address, closing it) is on the protocol."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.config import load_settings
from cerveau_tui.loop.engine import Engine
from cerveau_tui.provider.types import Provider
from cerveau_tui.session import build_session
from cerveau_tui.testing.fake_provider import EXHAUSTED, FakeProvider


def _session(ws: Path, provider: FakeProvider, **flags: object):  # type: ignore[no-untyped-def]
    settings = load_settings(ws, flags=dict(flags), environ={}, user_config=ws / "none.toml")
    return build_session(settings, provider=provider)


def test_a_session_runs_a_turn_on_the_fake_provider(tmp_path: Path) -> None:
    fake = FakeProvider([FakeProvider.call("write_file", path="a.txt", content="hi\n"), "done"])
    s = _session(tmp_path, fake)
    try:
        out = s.engine.run("write a.txt")
    finally:
        s.close()
    assert (tmp_path / "a.txt").read_text() == "hi\n" and out.message == "done"
    # What the model read second: the call's result, after the call.
    assert fake.requests[1]["messages"][-1]["role"] == "tool"


def test_closing_the_session_closes_its_provider(tmp_path: Path) -> None:
    fake = FakeProvider()
    _session(tmp_path, fake).close()
    assert fake.closed


def test_the_status_says_the_mode_the_provider_resolved(tmp_path: Path) -> None:
    s = _session(tmp_path, FakeProvider(mode="constrained"), action_mode="auto")
    try:
        assert s.status()["action_mode"] == "constrained"
    finally:
        s.close()


def test_a_spent_script_answers_without_a_call() -> None:
    fake = FakeProvider()
    assert fake.complete([], [], max_tokens=8).content == EXHAUSTED


def test_the_fake_meets_the_provider_protocol() -> None:
    provider: Provider = FakeProvider()  # mypy checks this line: the protocol, whole
    assert provider.base_url == "" and provider.resolved_mode() == "native"


def test_an_engine_given_delegation_builds_its_own_delegator(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "none.toml")
    from cerveau_tui.bus import Emitter
    from cerveau_tui.loop.approver import DenyAll
    from cerveau_tui.tools.registry import Registry

    engine = Engine(
        provider=FakeProvider(),
        registry=Registry([]),
        bus=Emitter(),
        settings=settings,
        approver=DenyAll(),
        delegation=True,
    )
    assert engine.delegate is not None
