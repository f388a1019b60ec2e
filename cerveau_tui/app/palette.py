"""The app's commands in the palette (Ctrl+P), beside Textual's own.

What is offered follows the session's state: Interrupt only while a turn runs; rewind, compaction
and the network and discussion switches only with a session and no turn (they are queued for the
engine thread, and must not race a turn); one "Revoke session grant" per grant still in force,
asked of the session (never of the engine's policy, from the UI thread).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

import platformdirs
from textual.app import SystemCommand
from textual.notifications import SeverityLevel

from ..config import Settings
from ..text_safety import visible
from . import rewind_actions, session_actions
from .runner import SessionRunner
from .widgets.chat import ChatView

if TYPE_CHECKING:
    from ..session import Session


class PaletteHost(Protocol):
    """What the commands need of the app (app.py's CerveauApp)."""

    busy: bool
    settings: Settings
    runner: SessionRunner | None

    @property
    def chat(self) -> ChatView: ...
    def action_toggle_planner(self) -> None: ...
    def action_toggle_reasoning(self) -> None: ...
    def action_interrupt(self) -> None: ...
    def action_stop_thinking(self) -> None: ...
    def action_help(self) -> None: ...
    def save_screenshot(self, filename: str | None = None, path: str | None = None) -> str: ...
    def notify(
        self, message: str, *, title: str = "", severity: SeverityLevel = "information"
    ) -> None: ...
    def set_timer(self, delay: float, callback: Callable[[], object]) -> object: ...


def screenshot_dir(downloads: Path | None = None, state: Path | None = None) -> Path:
    """Downloads when there is one, else cerveau's state folder (made). Textual's own Screenshot
    writes to ~/Downloads only, and on a server with no such folder it failed with nothing saved."""
    down = downloads if downloads is not None else platformdirs.user_downloads_path()
    if down.is_dir():
        return down
    out = (state or platformdirs.user_state_path("cerveau")) / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    return out


def take_screenshot(app: PaletteHost, where: Callable[[], Path] = screenshot_dir) -> None:
    try:
        saved = app.save_screenshot(path=str(where()))
    except OSError as exc:
        app.notify(f"screenshot not saved: {exc}", title="Screenshot", severity="error")
        return
    app.notify(f"saved {saved}", title="Screenshot")


def app_commands(app: PaletteHost) -> Iterator[SystemCommand]:
    # In place of Textual's "Keys" (app.py drops it): that one lists the focused prompt's
    # text-editing keys and says nothing of approvals, `!cmd`, steering or Esc Esc.
    yield SystemCommand(
        "Keys",
        "The app's keys: prompt, approvals, !cmd, steering, Esc Esc (also F1)",
        app.action_help,
    )
    yield SystemCommand("Toggle planner", "Show or hide the plan panel", app.action_toggle_planner)
    yield SystemCommand(
        "Toggle reasoning", "Show or hide the model's reasoning", app.action_toggle_reasoning
    )
    runner = app.runner
    if app.busy:
        yield SystemCommand("Interrupt", "Stop the running turn", app.action_interrupt)
        yield SystemCommand(
            "Stop thinking",
            "End the model's reasoning now; it answers without it (also F4)",
            app.action_stop_thinking,
        )
    elif runner is not None and runner.session is not None:
        yield SystemCommand(
            "Rewind…",
            "Back to just before any turn: the code, the conversation, or both (also Esc Esc)",
            partial(rewind_actions.open_list, cast(rewind_actions.Host, app)),
        )
        yield SystemCommand(
            "Rewind the last turn",
            "Undo the last turn: its files (commands' changes too) and/or its conversation",
            partial(rewind_actions.rewind_last, cast(rewind_actions.Host, app)),
        )
        yield SystemCommand(
            "Compact history",
            "Replace older rounds with a resume brief",
            runner.compact,
        )
        net = bool(getattr(app.settings, "network", False))
        yield SystemCommand(
            "Withdraw network" if net else "Grant network",
            "Commands lose the network again"
            if net
            else "Commands may reach the network, any host, for the rest of this session",
            partial(runner.set_network, not net),
        )
        discuss = bool(getattr(app.settings, "discuss", False))
        yield SystemCommand(
            "Leave discussion mode" if discuss else "Discussion mode",
            "Back to autopilot: the agent may change files"
            if discuss
            else "Read and plan only; the plan guides the next turns",
            partial(runner.set_discuss, not discuss),
        )
        yield from switch_commands(app.settings, runner)
        host = cast(session_actions.Host, app)
        yield from session_actions.gate_commands(host)
        yield from session_actions.memory_commands(host)
        yield from session_actions.session_commands(host)
    yield SystemCommand(
        "Screenshot",
        "Save an SVG of the screen (to Downloads, else cerveau's state folder)",
        # After the palette has closed, so the picture is of the app, not of the palette.
        lambda: app.set_timer(0.1, partial(take_screenshot, app)),
    )
    session = runner.session if runner is not None else None
    for key, scope in session.session_grants() if session is not None else []:
        yield SystemCommand(
            f"Revoke session grant: {scope}",
            "Ask again next time instead of approving this for the session",
            partial(revoke_grant, app, key, scope),
        )
    for key, raw, decision in session.lasting_rules() if session is not None else []:
        kind = "always" if decision == "allow" else "never"
        scope = visible(raw)  # the model wrote the command it names: its controls shown inert
        yield SystemCommand(
            f"Revoke lasting rule ({kind}): {scope}",
            "Kept for this workspace outside it; revoked, the next matching call asks again",
            partial(revoke_rule, app, key, f"{kind}: {scope}"),
        )


def switch_commands(settings: Settings, runner: SessionRunner) -> Iterator[SystemCommand]:
    """Turn close and explore, each switched for this session (issue 36: `doctor` says which
    are on by default; `[memory] turn_close`, `delegate` in the config)."""
    switches = (
        ("Turn close", settings.turn_close, _turn_close, TURN_CLOSE_SAYS),
        ("Explore", settings.delegate, _explore, EXPLORE_SAYS),
    )
    for title, on, switch, (says_off, says_on) in switches:
        yield SystemCommand(
            f"{title}: switch {'off' if on else 'on'}",
            says_off if on else says_on,
            partial(runner.call, partial(switch, on=not on)),
        )


#: What switching each one off, and on, does (the palette's help line).
TURN_CLOSE_SAYS = (
    "Stop distilling notes after each turn",
    "Distil notes after each turn that wrote files, for the next sessions",
)
EXPLORE_SAYS = (
    "The model stops handing questions to a read-only helper",
    "The model may hand one question at a time to a read-only helper",
)


def _turn_close(session: Session, on: bool) -> None:
    session.set_turn_close(on)


def _explore(session: Session, on: bool) -> None:
    session.set_explore(on)


def revoke_grant(app: PaletteHost, key: str, scope: str) -> None:
    session = app.runner.session if app.runner is not None else None
    if session is not None and session.revoke(key):
        app.chat.notice(f"session grant revoked: {scope}")


def revoke_rule(app: PaletteHost, key: str, shown: str) -> None:
    session = app.runner.session if app.runner is not None else None
    if session is not None and session.revoke_rule(key):
        app.chat.notice(f"lasting rule revoked ({shown})")
