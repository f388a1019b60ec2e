"""The palette switches turn close and explore for the session (issue 36); the entries say which
way they switch, and the session is asked on the engine thread, as every session action is."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.config import Settings

from .helpers import FakeClock, FakeSession, wait_until


@dataclass
class _Session(FakeSession):
    settings: Settings = field(default_factory=Settings)
    switched: list[tuple[str, bool]] = field(default_factory=list)

    def gate_offer(self) -> str | None:
        return None

    def set_turn_close(self, on: bool) -> None:
        self.switched.append(("turn_close", on))
        self.settings.turn_close = on

    def set_explore(self, on: bool) -> None:
        self.switched.append(("explore", on))
        self.settings.delegate = on


async def test_the_palette_switches_turn_close_and_explore_each_way(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path, turn_close=False, delegate=False)
    session = _Session(settings=settings)
    app = CerveauApp(
        settings,
        session_factory=lambda bus, approver, progress: session,  # type: ignore[arg-type,return-value]
        clock=FakeClock(),
        save_setting=lambda k, v: None,
    )
    async with app.run_test() as pilot:
        assert await wait_until(pilot, lambda: app._ready_status is not None)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        commands["Turn close: switch on"].callback()
        commands["Explore: switch on"].callback()
        assert await wait_until(pilot, lambda: len(session.switched) == 2)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Turn close: switch off", "Explore: switch off"} <= titles
        {c.title: c for c in app.get_system_commands(app.screen)}[
            "Turn close: switch off"
        ].callback()
        assert await wait_until(pilot, lambda: len(session.switched) == 3)
    assert session.switched == [("turn_close", True), ("explore", True), ("turn_close", False)]
