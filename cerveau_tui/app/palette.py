"""The app's commands in the palette (Ctrl+P), beside Textual's own.

What is offered follows the session's state: Interrupt only while a turn runs; undo, compaction
and the network and discussion switches only with a session and no turn (they are queued for the
engine thread, and must not race a turn); one "Revoke session grant" per grant still in force,
asked of the session (never of the engine's policy, from the UI thread).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Protocol

from textual.app import SystemCommand

from ..config import Settings
from .runner import SessionRunner
from .widgets.chat import ChatView


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


def app_commands(app: PaletteHost) -> Iterator[SystemCommand]:
    yield SystemCommand("Toggle planner", "Show or hide the plan panel", app.action_toggle_planner)
    yield SystemCommand(
        "Toggle reasoning", "Show or hide the model's reasoning", app.action_toggle_reasoning
    )
    runner = app.runner
    if app.busy:
        yield SystemCommand("Interrupt", "Stop the running turn", app.action_interrupt)
    elif runner is not None and runner.session is not None:
        yield SystemCommand(
            "Undo last turn",
            "Put back the files the last turn's tools changed",
            partial(runner.submit, "undo"),
        )
        yield SystemCommand(
            "Compact history",
            "Replace older rounds with a resume brief",
            partial(runner.submit, "compact"),
        )
        net = bool(getattr(app.settings, "network", False))
        yield SystemCommand(
            "Withdraw network" if net else "Grant network",
            "Commands lose the network again"
            if net
            else "Commands may reach the network for the rest of this session",
            partial(runner.submit, "network", "off" if net else "on"),
        )
        discuss = bool(getattr(app.settings, "discuss", False))
        yield SystemCommand(
            "Leave discussion mode" if discuss else "Discussion mode",
            "Back to autopilot: the agent may change files"
            if discuss
            else "Read and plan only; the plan guides the next turns",
            partial(runner.submit, "discuss", "off" if discuss else "on"),
        )
    session = runner.session if runner is not None else None
    for key, scope in session.session_grants() if session is not None else []:
        yield SystemCommand(
            f"Revoke session grant: {scope}",
            "Ask again next time instead of approving this for the session",
            partial(revoke_grant, app, key, scope),
        )


def revoke_grant(app: PaletteHost, key: str, scope: str) -> None:
    session = app.runner.session if app.runner is not None else None
    if session is not None and session.revoke(key):
        app.chat.notice(f"session grant revoked: {scope}")
