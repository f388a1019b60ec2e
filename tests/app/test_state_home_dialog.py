"""A read-only workspace in the TUI (issue 21): before the session is built, the app says where
its state could go instead and offers it (screens/state_home.py); `u`, then `u` again, alone,
keeps it in the user state folder, and the session is built from settings read again; `q` starts
nothing and says how to choose next time. On a really read-only folder (testing/read_only.py);
the session factory is a fake that remembers the settings it was given."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui import state_home
from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.screens.armed import ARMING_TEXT
from cerveau_tui.app.screens.state_home import StateHomeScreen
from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine
from cerveau_tui.app.workspace_trust import TrustHooks
from cerveau_tui.config import Settings
from cerveau_tui.testing.read_only import read_only_tree

from .helpers import FakeClock, FakeSession, press_alone, wait_until


@pytest.fixture
def ro_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "hello.py").write_text("print('hello')\n")
    state_home.forget()
    with read_only_tree(src) as ws:
        yield ws
    state_home.forget()


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted([*dirnames, *filenames]):
            h.update(f"{Path(dirpath, name).relative_to(root)}".encode())
    return h.hexdigest()


class Harness:
    def __init__(self, ws: Path) -> None:
        self.ws = ws
        self.built: list[Settings] = []
        self.reloads = 0
        self.clock = FakeClock()
        hooks = TrustHooks(reload=self._reload, factory_for=self.factory_for)
        self.app = CerveauApp(
            Settings(workspace=ws),
            session_factory=self.factory_for(Settings(workspace=ws)),
            clock=self.clock,
            save_setting=lambda k, v: None,
            trust=hooks,
        )

    def _reload(self) -> Settings:
        self.reloads += 1
        return Settings(workspace=self.ws, network=True)  # told apart from the first

    def factory_for(self, settings: Settings) -> Any:
        def factory(bus: Any, approver: Any, progress: Any) -> FakeSession:
            self.built.append(settings)
            return FakeSession()

        return factory

    def notices(self) -> list[str]:
        return [n.text for n in self.app.query_one(ChatView).query(NoticeLine)]


async def _dialog(pilot: Any) -> StateHomeScreen:
    def shown() -> bool:
        return isinstance(pilot.app.screen, StateHomeScreen) and pilot.app.screen.on_screen

    assert await wait_until(pilot, shown)
    screen = pilot.app.screen
    assert isinstance(screen, StateHomeScreen)
    return screen


async def test_the_dialog_says_where_the_state_could_go_before_any_session(ro_ws: Path) -> None:
    h = Harness(ro_ws)
    alt = state_home.alternate_for(ro_ws)
    async with h.app.run_test() as pilot:
        screen = await _dialog(pilot)
        await pilot.pause()
        where = str(screen.query_one("#where").render())
        notices = h.notices()
        await pilot.press("ctrl+q")
    assert h.built == []
    assert str(alt) in where.replace("\n", "")
    assert any(str(alt) in n and "--state-dir user" in n for n in notices)  # a chat line too


async def test_typing_as_it_appears_goes_to_the_prompt(ro_ws: Path) -> None:
    h = Harness(ro_ws)
    async with h.app.run_test() as pilot:
        screen = await _dialog(pilot)
        await pilot.press("u", "q")
        await pilot.pause()
        assert h.app.screen is screen and h.built == [] and state_home.chosen(ro_ws) is None
        assert h.app.prompt.text == "uq"
        assert str(screen.query_one("#keys").render()) == ARMING_TEXT
        await pilot.press("ctrl+q")


async def test_u_twice_keeps_the_state_in_the_user_folder_and_builds_the_session(
    ro_ws: Path,
) -> None:
    before = _digest(ro_ws)
    h = Harness(ro_ws)
    alt = state_home.alternate_for(ro_ws)
    async with h.app.run_test() as pilot:
        await _dialog(pilot)
        await press_alone(pilot, h.clock, "u")
        assert h.built == [] and state_home.chosen(ro_ws) is None  # once is not enough
        await press_alone(pilot, h.clock, "u")
        assert await wait_until(pilot, lambda: bool(h.built))
        notices = h.notices()
        await pilot.press("ctrl+q")
    assert state_home.chosen(ro_ws) == alt and alt.is_dir()
    assert h.reloads == 1 and h.built[0].network  # built from the settings read again
    assert any("state is kept in" in n and str(alt) in n for n in notices)
    assert state_home.state_path(ro_ws, "sessions") == alt / "sessions"
    assert _digest(ro_ws) == before


async def test_q_starts_nothing_and_says_how(ro_ws: Path) -> None:
    h = Harness(ro_ws)
    async with h.app.run_test() as pilot:
        await _dialog(pilot)
        await press_alone(pilot, h.clock, "q")
        assert await wait_until(pilot, lambda: any("no session started" in n for n in h.notices()))
        await pilot.pause()
        notices = h.notices()
        await pilot.press("ctrl+q")
    assert h.built == [] and state_home.chosen(ro_ws) is None
    assert any("--state-dir user" in n for n in notices if "no session started" in n)


async def test_a_writable_workspace_is_not_asked(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    async with h.app.run_test() as pilot:
        assert await wait_until(pilot, lambda: bool(h.built))
        assert not isinstance(pilot.app.screen, StateHomeScreen)
        await pilot.press("ctrl+q")


async def test_a_state_dir_already_chosen_is_said_not_asked(ro_ws: Path) -> None:
    alt = state_home.choose(ro_ws, "auto")  # as load_settings does for state_dir = "auto"
    assert alt == state_home.alternate_for(ro_ws)
    h = Harness(ro_ws)
    async with h.app.run_test() as pilot:
        assert await wait_until(pilot, lambda: bool(h.built))
        assert not isinstance(pilot.app.screen, StateHomeScreen)
        notices = h.notices()
        await pilot.press("ctrl+q")
    assert any("state is kept in" in n and str(alt) in n for n in notices)
