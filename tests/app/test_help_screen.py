"""The help screen (issue 15, item 8): F1, `?` on an empty prompt and the palette's "Keys" open
the app's own keys; Esc closes it; `?` typed into a question stays a character."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.screens.help import SECTIONS, HelpScreen, help_content

from .helpers import viewer_app, wait_until

#: How the help spells each app key.
SPELLED = {
    "ctrl+c": "Ctrl+C",
    "escape": "Esc Esc",
    "ctrl+q": "Ctrl+Q",
    "f1": "F1",
    "f2": "F2",
    "f3": "F3",
    "f4": "F4",
    "question_mark": "?",
    "pageup": "PgUp",
    "pagedown": "PgDn",
}


def _help_up(app: CerveauApp) -> bool:
    return isinstance(app.screen, HelpScreen) and bool(app.screen.query(".meaning"))


def _text(app: CerveauApp) -> str:
    return "\n".join(str(w.render()) for w in app.screen.query("#help-body Static"))


def test_the_help_lists_every_app_key_and_every_approval_key() -> None:
    text = str(help_content())
    for binding in CerveauApp.BINDINGS:
        assert SPELLED[binding.key] in text, binding  # type: ignore[union-attr]
    keys = {k for _, rows in SECTIONS for k, _ in rows}
    for binding in ApprovalScreen.BINDINGS:
        key = binding.key  # type: ignore[union-attr]
        assert ("1-5" if key.isdigit() else {"escape": "Esc"}.get(key, key)) in keys
    for needed in ("!cmd", "steers", "Esc Esc", "Ctrl+P", "approve for this session"):
        assert needed in text


async def test_f1_opens_the_help_and_esc_closes_it(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f1")
        assert await wait_until(pilot, lambda: _help_up(app))
        text = _text(app)
        assert "approve once" in text and "!cmd" in text and "Esc Esc" in text
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        assert app.focused is app.prompt


async def test_question_mark_on_an_empty_prompt_opens_the_help(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.focused is app.prompt
        await pilot.press("question_mark")
        assert await wait_until(pilot, lambda: _help_up(app))
        assert app.prompt.text == ""


async def test_question_mark_in_a_question_is_a_character(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("w", "h", "y", "question_mark")
        await pilot.pause()
        assert app.prompt.text == "why?"
        assert not isinstance(app.screen, HelpScreen)


async def test_the_palettes_keys_command_opens_the_apps_help(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        keys = [c for c in app.get_system_commands(app.screen) if c.title == "Keys"]
        assert len(keys) == 1  # ours, not Textual's panel of the text area's editing keys
        keys[0].callback()
        assert await wait_until(pilot, lambda: _help_up(app))
        assert "PgUp" in _text(app)
        assert not app.screen_stack[0].query("HelpPanel")
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))
