"""The person's hold on the session's long-lived state: the done-check question asked once at
start, and the palette's entries for the gate, notes, lessons, skills and earlier sessions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.screens.gate import GateScreen
from cerveau_tui.config import Settings

from .helpers import FakeClock, FakeSession, press_alone, wait_until


@dataclass
class _Item:
    id: int
    text: str
    seen: int = 1


@dataclass
class _Session(FakeSession):
    offer: str | None = "pytest -q"
    gate_set: list[str] = field(default_factory=list)
    skills_loaded: list[str] = field(default_factory=list)
    notes_kept: list[_Item] = field(default_factory=lambda: [_Item(1, "the API key lives in .env")])

    def gate_offer(self) -> str | None:
        return self.offer

    def set_gate(self, value: str) -> None:
        self.gate_set.append(value)
        self.offer = None

    def notes(self) -> list[_Item]:
        return list(self.notes_kept)

    def forget_note(self, note_id: int) -> bool:
        before = len(self.notes_kept)
        self.notes_kept = [n for n in self.notes_kept if n.id != note_id]
        return len(self.notes_kept) < before

    def lessons(self) -> list[_Item]:
        return [_Item(7, "`pytest` kept failing; what worked after it: `pytest -x`", 2)]

    def forget_lesson(self, lesson_id: int) -> bool:
        return True

    def skills(self) -> list[tuple[str, str]]:
        return [("release", "How this project cuts a release")]

    def load_skill(self, name: str) -> bool:
        self.skills_loaded.append(name)
        return True


def _app(tmp_path: Path, session: _Session, clock: FakeClock) -> CerveauApp:
    return CerveauApp(
        Settings(workspace=tmp_path),
        session_factory=lambda bus, approver, progress: session,  # type: ignore[arg-type,return-value]
        clock=clock,
        save_setting=lambda k, v: None,
    )


async def test_the_detected_check_is_offered_once_and_y_saves_auto(tmp_path: Path) -> None:
    session, clock = _Session(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test() as pilot:
        assert await wait_until(pilot, lambda: isinstance(app.screen, GateScreen))
        assert "pytest -q" in str(app.screen.query_one("#items").render())
        await press_alone(pilot, clock, "y", "y")
        assert await wait_until(pilot, lambda: session.gate_set == ["auto"])
        assert not isinstance(app.screen, GateScreen)


async def test_a_key_typed_as_the_question_appears_does_not_answer_it(tmp_path: Path) -> None:
    session, clock = _Session(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test() as pilot:
        assert await wait_until(pilot, lambda: isinstance(app.screen, GateScreen))
        await pilot.press("y")  # not armed yet: it goes to the prompt
        await pilot.pause()
        assert session.gate_set == [] and isinstance(app.screen, GateScreen)


async def test_no_question_when_nothing_was_detected(tmp_path: Path) -> None:
    session = _Session(offer=None)
    app = _app(tmp_path, session, FakeClock())
    async with app.run_test() as pilot:
        assert await wait_until(pilot, lambda: app._ready_status is not None)
        await pilot.pause(0.2)
        assert not isinstance(app.screen, GateScreen)


async def test_the_palette_lists_notes_lessons_and_skills_and_acts_on_them(tmp_path: Path) -> None:
    session = _Session(offer=None)
    app = _app(tmp_path, session, FakeClock())
    async with app.run_test() as pilot:
        assert await wait_until(pilot, lambda: app._ready_status is not None)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        assert "Forget note: the API key lives in .env" in commands
        assert any(t.startswith("Forget lesson: `pytest` kept failing") for t in commands)
        assert "Load skill: release" in commands
        commands["Forget note: the API key lives in .env"].callback()
        assert session.notes_kept == []
        commands["Load skill: release"].callback()
        assert await wait_until(pilot, lambda: session.skills_loaded == ["release"])
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Forget note: the API key lives in .env" not in titles
