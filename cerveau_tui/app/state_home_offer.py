"""At start-up, before the session is built: a read-only workspace is said, with where its state
could go instead, and the person is offered it (screens/state_home.py). The choice is made in
state_home.py, the one place that decides; the settings are then read again (the workspace
config lives with the state) and the session is built with them. Every answer is a chat line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import state_home
from .screens.state_home import StateHomeScreen


def offer_state_home(app: Any, then: Callable[[], None]) -> bool:
    """Push the dialog when the workspace's `.cerveau` cannot be written and no other place was
    chosen (`--state-dir`, `state_dir`); `then` runs once it is answered with a place. False (and
    nothing shown) when there is nothing to ask."""
    ws = app.settings.workspace
    if (alt := state_home.chosen(ws)) is not None:  # --state-dir, state_dir: said, not asked
        app.chat.notice(f"this workspace's state is kept in {alt}", "info")
        return False
    if app.runner is None:
        return False
    why = state_home.unwritable_reason(ws)
    if why is None:
        return False
    alt = state_home.alternate_for(ws)
    app.chat.notice(state_home.offer(ws, why), "warning")  # the dialog's question, kept in the chat
    screen = StateHomeScreen(ws, why, alt, app.clock, app.prompt, app.quiet_s)
    app.push_screen(screen, lambda use: _answered(app, bool(use), then))
    return True


def _answered(app: Any, use: bool, then: Callable[[], None]) -> None:
    chat = app.chat
    ws = app.settings.workspace
    app.prompt.focus()
    if not use:
        chat.notice(
            "no session started: the workspace is read-only and its state was not moved. "
            f"Quit (Ctrl+Q), then start with {state_home.FLAG} user, or make it writable",
            "error",
        )
        return
    try:
        where = state_home.choose(ws, state_home.USER)
    except state_home.StateHomeError as exc:
        chat.notice(f"no session started: {exc}", "error")
        return
    chat.notice(
        f"this workspace's state is kept in {where} (the workspace is read-only); next time "
        f'{state_home.FLAG} user, or state_dir = "auto" in your own config',
        "info",
    )
    hooks = app._trust
    if hooks.reload is not None and hooks.factory_for is not None:
        try:
            fresh = hooks.reload()  # the workspace config is read from the new place
        except Exception as exc:  # noqa: BLE001 - a config that no longer loads: said, not raised
            chat.notice(f"settings not read again ({exc}); starting with those in force", "warning")
        else:
            app.settings = fresh
            app._session_factory = hooks.factory_for(fresh)
    then()
