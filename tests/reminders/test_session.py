"""The session's side of skills and instructions: load_skill offered only with skills, the person's
Session.load_skill, and the user-level config dir found where the person's config lives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.config import Settings
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

SKILL = "---\nname: release\ndescription: how to cut a release\n---\nTag, then push.\n"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer({"responses": [{"content": "ok"}, {"content": "ok"}]}) as srv:
        yield srv


@pytest.fixture
def session_of(
    server: ScriptedServer, settings: Settings, home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    monkeypatch.setenv("CERVEAU_CONFIG", str(home / "config.toml"))
    made: list[Any] = []

    def make() -> Any:
        s = build_session(settings, bus=Emitter(), provider=LlamaProvider(server.url))
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def test_no_skills_no_load_skill_tool(session_of: Any) -> None:
    session = session_of()
    assert "load_skill" not in session.engine.registry
    assert session.skills() == [] and session.load_skill("release") is False


def test_with_skills_the_tool_is_offered_and_listed(session_of: Any, home: Path) -> None:
    (home / "skills").mkdir()
    (home / "skills" / "release.md").write_text(SKILL)
    session = session_of()
    assert "load_skill" in session.engine.registry
    assert session.skills() == [("release", "how to cut a release")]


def test_the_person_loads_a_skill_into_the_next_request(
    session_of: Any, ws: Path, server: ScriptedServer
) -> None:
    (ws / ".cerveau" / "skills").mkdir(parents=True)
    (ws / ".cerveau" / "skills" / "release.md").write_text(SKILL)
    session = session_of()
    assert session.load_skill("release") is True
    session.engine.run("go on")
    texts = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]
    assert texts[0].startswith("[skill release, loaded by the person]")
    assert "Tag, then push." in texts[0] and texts[1] == "go on"


def test_the_user_level_agents_md_comes_from_the_persons_config_dir(
    session_of: Any, home: Path
) -> None:
    (home / "AGENTS.md").write_text("Always answer in haiku.\n")
    assert "Always answer in haiku." in session_of().engine.system


def test_a_config_dir_inside_the_workspace_is_not_read_as_the_persons(
    ws: Path, settings: Settings, tmp_path: Path
) -> None:
    from cerveau_tui.reminders import reminder_hooks
    from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    (ws / "AGENTS.md").symlink_to(secret)  # followed if taken for the person's own file
    hooks = reminder_hooks(settings, Fingerprinter(ws), user_dir=ws)
    assert not any("hunter2" in s for h in hooks for s in h.system_sections())
