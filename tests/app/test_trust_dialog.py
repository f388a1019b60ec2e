"""The trust dialog (screens/trust.py, app/workspace_trust.py): a workspace config that lowers
protection is asked about at start-up, before the session is built, and the session is built from
the answer. Settings are built by hand (config.py's review is tested with config.py); the record,
reload and session factory are fakes that remember what they were given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.screens.armed import ARMING_TEXT
from cerveau_tui.app.screens.trust import TrustScreen
from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine
from cerveau_tui.app.workspace_trust import TrustHooks
from cerveau_tui.config import Settings

from .helpers import FakeClock, FakeSession, press_alone, wait_until

REVIEW = ["sandbox: full-access (otherwise workspace-write)", "network: granted to every command"]


class Harness:
    """The app with fake trust hooks; `built` holds the settings each session was built from."""

    def __init__(
        self, ws: Path, *, reloaded: Settings | None = None, can_reload: bool = True
    ) -> None:
        self.safer = Settings(workspace=ws)
        self.safer.workspace_review = list(REVIEW)
        self.safer.workspace_config_digest = "d1"
        self.trusted_settings = reloaded or Settings(
            workspace=ws, sandbox="full-access", network=True
        )
        self.recorded: list[tuple[Path, str]] = []
        self.reloads = 0
        self.built: list[Settings] = []
        hooks = TrustHooks(
            record=lambda ws, digest: self.recorded.append((ws, digest)),
            reload=self._reload if can_reload else None,
            factory_for=self.factory_for,
        )
        self.clock = FakeClock()
        self.app = CerveauApp(
            self.safer,
            session_factory=self.factory_for(self.safer),
            clock=self.clock,
            save_setting=lambda k, v: None,
            trust=hooks,
        )

    def _reload(self) -> Settings:
        self.reloads += 1
        return self.trusted_settings

    def factory_for(self, settings: Settings) -> Any:
        def factory(bus: Any, approver: Any, progress: Any) -> FakeSession:
            self.built.append(settings)
            return FakeSession()

        return factory

    def notices(self) -> list[str]:
        return [n.text for n in self.app.query_one(ChatView).query(NoticeLine)]


async def _dialog(pilot: Any) -> TrustScreen:
    def shown() -> bool:
        return isinstance(pilot.app.screen, TrustScreen) and pilot.app.screen.on_screen

    assert await wait_until(pilot, shown)
    screen = pilot.app.screen
    assert isinstance(screen, TrustScreen)
    return screen


async def test_the_dialog_comes_before_the_session_is_built(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    async with h.app.run_test() as pilot:
        await _dialog(pilot)
        await pilot.pause()
        assert h.built == [] and h.app.runner is not None and not h.app.runner.thread.is_alive()


async def test_the_dialog_lists_each_lowering_setting(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    async with h.app.run_test() as pilot:
        screen = await _dialog(pilot)
        items = str(screen.query_one("#items").render())
        assert all(line in items for line in REVIEW)
        assert str(tmp_path / ".cerveau" / "config.toml") in str(screen.query_one("#head").render())


async def test_keys_typed_as_it_appears_go_to_the_prompt_not_the_question(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    async with h.app.run_test() as pilot:
        screen = await _dialog(pilot)
        await pilot.press("t", "i")
        await pilot.pause()
        assert h.app.screen is screen and h.recorded == [] and h.built == []
        assert h.app.prompt.text == "ti"
        assert str(screen.query_one("#keys").render()) == ARMING_TEXT


async def test_t_records_the_trust_and_builds_the_session_from_the_reloaded_settings(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path)
    async with h.app.run_test() as pilot:
        await _dialog(pilot)
        await press_alone(pilot, h.clock, "t", "t")
        assert await wait_until(pilot, lambda: bool(h.built))
        await pilot.press("ctrl+q")
    assert h.recorded == [(tmp_path, "d1")] and h.reloads == 1
    assert h.built == [h.trusted_settings] and h.app.settings is h.trusted_settings


async def test_trusting_says_which_values_are_in_force(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    async with h.app.run_test() as pilot:
        await _dialog(pilot)
        await press_alone(pilot, h.clock, "t", "t")
        assert await wait_until(pilot, lambda: any("trusted and applied" in n for n in h.notices()))
        notice = next(n for n in h.notices() if "trusted and applied" in n)
        await pilot.press("ctrl+q")
    assert "in force: sandbox full-access, approval on-request, network on" in notice


async def test_i_keeps_the_safer_values_and_says_so(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    async with h.app.run_test() as pilot:
        await _dialog(pilot)
        await press_alone(pilot, h.clock, "i")
        assert await wait_until(pilot, lambda: bool(h.built))
        notices = h.notices()
        await pilot.press("ctrl+q")
    assert h.recorded == [] and h.reloads == 0 and h.built == [h.safer]
    assert any(
        "NOT applied" in n
        and "in force: sandbox workspace-write, approval on-request, network off" in n
        for n in notices
    )


async def test_escape_once_armed_ignores_too(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    async with h.app.run_test() as pilot:
        await _dialog(pilot)
        await press_alone(pilot, h.clock, "escape")
        assert await wait_until(pilot, lambda: bool(h.built))
        await pilot.press("ctrl+q")
    assert h.recorded == [] and h.built == [h.safer]


async def test_a_file_changed_after_it_was_shown_is_not_applied(tmp_path: Path) -> None:
    changed = Settings(workspace=tmp_path)
    changed.workspace_review = ["sandbox: full-access (otherwise workspace-write)"]
    h = Harness(tmp_path, reloaded=changed)
    async with h.app.run_test() as pilot:
        await _dialog(pilot)
        await press_alone(pilot, h.clock, "t", "t")
        assert await wait_until(pilot, lambda: bool(h.built))
        notices = h.notices()
        await pilot.press("ctrl+q")
    assert h.built == [h.safer]
    assert any("changed after it was shown" in n for n in notices)


async def test_without_a_way_to_reload_the_trust_applies_from_the_next_start(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, can_reload=False)
    async with h.app.run_test() as pilot:
        await _dialog(pilot)
        await press_alone(pilot, h.clock, "t", "t")
        assert await wait_until(pilot, lambda: bool(h.built))
        notices = h.notices()
        await pilot.press("ctrl+q")
    assert h.recorded == [(tmp_path, "d1")] and h.built == [h.safer]
    assert any("applies from the next start" in n for n in notices)


async def test_with_nothing_to_review_the_session_starts_at_once(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.safer.workspace_review = []
    async with h.app.run_test() as pilot:
        assert await wait_until(pilot, lambda: bool(h.built))
        assert not isinstance(h.app.screen, TrustScreen)
        await pilot.press("ctrl+q")


async def test_a_file_trusted_earlier_is_announced_at_start(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.safer.workspace_review = []
    h.safer.workspace_lowered = ["sandbox: full-access (otherwise workspace-write)"]
    async with h.app.run_test() as pilot:
        assert await wait_until(pilot, lambda: bool(h.built))
        notices = h.notices()
        await pilot.press("ctrl+q")
    assert any("trusted earlier" in n and "sandbox: full-access" in n for n in notices)
