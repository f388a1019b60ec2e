"""Rewind on screen, against a rewinder with fixed answers (rewind_fakes.py): Esc Esc on an empty
prompt between turns opens the list, Enter asks what goes back, only a key pressed alone answers,
files changed outside the harness are named and asked about, the chat is the rewound history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.rewind_actions import FORWARD_HINT
from cerveau_tui.app.screens.armed import QUIET_S, TICK_S
from cerveau_tui.app.screens.rewind import ForwardRow, RewindListScreen, RewindScreen, TurnRow
from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine, UserMessage
from cerveau_tui.app.widgets.prompt import PromptInput
from cerveau_tui.config import Settings

from .helpers import FakeClock, arm, press_alone, wait_until
from .rewind_fakes import TASKS, FakeRewinder, RewindSession


def _app(tmp_path: Path, session: RewindSession, clock: FakeClock) -> CerveauApp:
    return CerveauApp(
        Settings(workspace=tmp_path),
        session_factory=lambda bus, approver, progress: session,  # type: ignore[arg-type,return-value]
        clock=clock,
        save_setting=lambda k, v: None,
    )


def _asked(app: CerveauApp) -> list[str]:
    return [str(w.render()) for w in app.screen_stack[0].query_one(ChatView).query(UserMessage)]


def _notices(app: CerveauApp) -> str:
    return "\n".join(n.text for n in app.screen_stack[0].query_one(ChatView).query(NoticeLine))


async def _ready(pilot: Any, app: CerveauApp) -> None:
    assert await wait_until(pilot, lambda: app._ready_status is not None)
    assert await wait_until(pilot, lambda: len(_asked(app)) == 3)  # the stored turns, drawn


async def _open_list(pilot: Any, app: CerveauApp) -> RewindListScreen:
    await pilot.press("escape", "escape")
    assert await wait_until(pilot, lambda: isinstance(app.screen, RewindListScreen))
    screen = app.screen
    assert isinstance(screen, RewindListScreen)
    return screen


async def _choose(pilot: Any, app: CerveauApp, turn: int) -> RewindScreen:
    screen = await _open_list(pilot, app)
    turns = screen.query_one("#turns")
    newest = max(r.number for r in screen.rows if isinstance(r, TurnRow))
    for _ in range(newest - turn):
        await pilot.press("up")
    assert screen.rows[turns.highlighted].number == turn  # type: ignore[attr-defined,index]
    await pilot.press("enter")
    assert await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
    dialog = app.screen
    assert isinstance(dialog, RewindScreen)
    return dialog


async def test_esc_esc_on_an_empty_prompt_lists_the_turns_newest_selected(tmp_path: Path) -> None:
    session, clock = RewindSession(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await _ready(pilot, app)
        screen = await _open_list(pilot, app)
        assert [r.number for r in screen.rows if isinstance(r, TurnRow)] == [1, 2, 3]
        assert screen.query_one("#turns").highlighted == 2  # type: ignore[attr-defined]
        first = screen.rows[1]
        assert isinstance(first, TurnRow) and first.task == TASKS[1].splitlines()[0]
        assert (first.files_changed, first.added, first.removed) == (2, 30, 4)
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: app.screen is app.screen_stack[0])
        assert session.rewinder.calls == []


async def test_esc_esc_with_text_in_the_prompt_opens_nothing(tmp_path: Path) -> None:
    session, clock = RewindSession(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test() as pilot:
        await _ready(pilot, app)
        await pilot.press(*"half a sentence")
        await pilot.press("escape", "escape")
        await pilot.pause(0.3)
        assert app.screen is app.screen_stack[0]
        assert app.query_one(PromptInput).text == "half a sentence"


async def test_choosing_turn_2_and_both_rewinds_and_redraws_the_chat(tmp_path: Path) -> None:
    session, clock = RewindSession(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await _ready(pilot, app)
        dialog = await _choose(pilot, app, 2)
        what = str(dialog.query_one("#what").render())
        assert "src/cli.py" in what and "2 turns dropped" in what
        await press_alone(pilot, clock, "b")
        assert await wait_until(pilot, lambda: bool(session.rewinder.calls))
        assert session.rewinder.calls == [("rewind", 2, "both", False, ())]
        assert await wait_until(pilot, lambda: _asked(app) == [TASKS[0]])
        assert "rewound to just before turn 2 (code and conversation)" in _notices(app)
        assert app.focused is app.query_one(PromptInput)


async def test_typing_into_the_dialog_decides_nothing_and_reaches_the_prompt(
    tmp_path: Path,
) -> None:
    session, clock = RewindSession(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test() as pilot:
        await _ready(pilot, app)
        dialog = await _choose(pilot, app, 2)
        clock.advance(QUIET_S)
        dialog.tick_arming()
        assert await wait_until(pilot, lambda: dialog.armed)
        for ch in "but convert back":  # b, c and v among them: prose, a key never alone
            await pilot.press("space" if ch == " " else ch)
            clock.advance(TICK_S)
            dialog.tick_arming()
        await pilot.pause(0.2)
        assert session.rewinder.calls == []
        assert app.screen is dialog
        assert app.query_one(PromptInput).text == "but convert back"


async def test_a_file_changed_outside_is_named_and_kept_when_asked(tmp_path: Path) -> None:
    session, clock = RewindSession(FakeRewinder(outside=["src/parser.py"])), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await _ready(pilot, app)
        dialog = await _choose(pilot, app, 2)
        assert "src/parser.py" in str(dialog.query_one("#conflicts").render())
        await press_alone(pilot, clock, "c")
        assert dialog.asking_conflicts and session.rewinder.calls == []
        assert "keep it as you have it" in str(dialog.keys_content())
        await press_alone(pilot, clock, "k")
        assert await wait_until(pilot, lambda: bool(session.rewinder.calls))
        assert session.rewinder.calls == [("rewind", 2, "code", False, ("src/parser.py",))]
        # code only: the rewinder's own line says what moved; the chat adds the way back
        assert await wait_until(pilot, lambda: FORWARD_HINT in _notices(app))
        assert len(_asked(app)) == 3  # code only: the conversation is as it was


async def test_overwriting_them_takes_the_same_key_twice(tmp_path: Path) -> None:
    session, clock = RewindSession(FakeRewinder(outside=["notes.txt"])), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await _ready(pilot, app)
        dialog = await _choose(pilot, app, 3)
        await press_alone(pilot, clock, "b", "o")
        assert session.rewinder.calls == [] and app.screen is dialog  # o once: asked again
        await arm(pilot, clock)
        assert "o again, alone" in str(dialog.query_one("#keys").render())
        await press_alone(pilot, clock, "o")
        assert await wait_until(pilot, lambda: bool(session.rewinder.calls))
        assert session.rewinder.calls == [("rewind", 3, "both", True, ())]


async def test_a_rewind_is_undone_from_the_same_list(tmp_path: Path) -> None:
    session, clock = RewindSession(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await _ready(pilot, app)
        await _choose(pilot, app, 2)
        await press_alone(pilot, clock, "v")
        assert await wait_until(pilot, lambda: _asked(app) == [TASKS[0]])
        screen = await _open_list(pilot, app)
        forward = screen.rows[-1]
        assert isinstance(forward, ForwardRow) and forward.to_turn == 2
        undone = [r.number for r in screen.rows if isinstance(r, TurnRow) and r.undone]
        assert undone == [2, 3]
        await pilot.press("down", "enter")
        assert await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await press_alone(pilot, clock, "b")  # not the forward dialog's key: typing
        assert session.rewinder.calls[-1][0] == "rewind"
        await press_alone(pilot, clock, "f")
        assert await wait_until(pilot, lambda: session.rewinder.calls[-1][0] == "forward")
        assert await wait_until(pilot, lambda: len(_asked(app)) == 3)
        assert "forward: the rewind is undone" in _notices(app)


async def test_a_key_typed_on_the_list_closes_it_and_goes_to_the_prompt(tmp_path: Path) -> None:
    session, clock = RewindSession(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test() as pilot:
        await _ready(pilot, app)
        await _open_list(pilot, app)
        await pilot.press("o", "k")
        assert await wait_until(pilot, lambda: app.screen is app.screen_stack[0])
        assert app.query_one(PromptInput).text == "ok"
        assert session.rewinder.calls == []


async def test_the_palette_offers_rewind_and_rewind_the_last_turn(tmp_path: Path) -> None:
    session, clock = RewindSession(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await _ready(pilot, app)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        assert "Undo last turn" not in commands
        commands["Rewind the last turn"].callback()
        assert await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        dialog = app.screen
        assert isinstance(dialog, RewindScreen)
        assert isinstance(dialog.preview.target, TurnRow) and dialog.preview.target.number == 3
        await press_alone(pilot, clock, "escape")
        assert await wait_until(pilot, lambda: app.screen is app.screen_stack[0])
        commands["Rewind…"].callback()
        assert await wait_until(pilot, lambda: isinstance(app.screen, RewindListScreen))
        assert session.rewinder.calls == []


async def test_a_turn_rewound_away_offers_its_code_only(tmp_path: Path) -> None:
    session, clock = RewindSession(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await _ready(pilot, app)
        await _choose(pilot, app, 2)
        await press_alone(pilot, clock, "v")
        assert await wait_until(pilot, lambda: _asked(app) == [TASKS[0]])
        dialog = await _choose(pilot, app, 3)  # rewound away: marked, its code still there
        assert dialog.code_only and "rewound away" in str(dialog.query_one("#what").render())
        await press_alone(pilot, clock, "b")  # not offered: typing, for the prompt
        assert session.rewinder.calls == [("rewind", 2, "conversation", False, ())]
        await press_alone(pilot, clock, "c")
        assert await wait_until(pilot, lambda: len(session.rewinder.calls) == 2)
        assert session.rewinder.calls[-1] == ("rewind", 3, "code", False, ())


async def test_a_forward_that_meets_a_persons_edit_asks_about_it(tmp_path: Path) -> None:
    session, clock = RewindSession(), FakeClock()
    app = _app(tmp_path, session, clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await _ready(pilot, app)
        await _choose(pilot, app, 3)
        await press_alone(pilot, clock, "b")
        assert await wait_until(pilot, lambda: len(_asked(app)) == 2)
        session.rewinder.forward_outside = ["README.md"]  # edited after the rewind
        await _open_list(pilot, app)
        await pilot.press("down", "enter")
        assert await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await press_alone(pilot, clock, "f")
        # refused, nothing moved: the dialog comes back naming the file
        assert await wait_until(
            pilot,
            lambda: isinstance(app.screen, RewindScreen) and app.screen.asking_conflicts,
        )
        dialog = app.screen
        assert isinstance(dialog, RewindScreen)
        assert "README.md" in str(dialog.query_one("#conflicts").render())
        assert len(_asked(app)) == 2
        await press_alone(pilot, clock, "k")
        assert await wait_until(pilot, lambda: len(_asked(app)) == 3)
        assert session.rewinder.calls[-1] == ("forward", False, ("README.md",))
