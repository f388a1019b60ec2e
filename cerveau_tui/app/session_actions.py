"""What the person does with the session's long-lived state, from the palette and at start-up:
the done check, remembered notes and lessons, skills, earlier sessions.

Each action that touches the engine (loading a skill, setting the gate) is queued for the engine
thread (`SessionRunner.call`), so it never races a turn; reading lists and forgetting a note or a
lesson are SQLite calls behind their own lock, done where the palette runs. Every session method
is looked up with getattr: a session without one (a test double, a feature switched off) offers
nothing rather than failing the palette.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, Protocol

from textual.app import SystemCommand

from ..config import Settings
from .runner import SessionRunner
from .screens.gate import GateScreen
from .widgets.chat import ChatView

#: The palette is searchable, but a list of hundreds is not a choice: the newest first, this many.
LISTED = 30


class Host(Protocol):
    settings: Settings
    runner: SessionRunner | None
    clock: Callable[[], float]
    quiet_s: float

    @property
    def chat(self) -> ChatView: ...
    @property
    def prompt(self) -> Any: ...
    def push_screen(self, screen: Any, callback: Any = None) -> Any: ...
    def resume_session(self, session_id: str) -> None: ...


def _session(app: Host) -> Any:
    return app.runner.session if app.runner is not None else None


def _ask(session: Any, name: str, *args: Any, default: Any = None) -> Any:
    method = getattr(session, name, None)
    if method is None:
        return default
    try:
        return method(*args)
    except Exception:  # noqa: BLE001 - a list that cannot be read offers nothing, it does not crash
        return default


# --- the done check, asked once per workspace ---------------------------------------------------


def offer_gate(app: Host) -> None:
    """At start-up: the stack's usual check, when one was detected and nothing is decided."""
    command = _ask(_session(app), "gate_offer")
    if not command:
        return
    screen = GateScreen(str(command), app.clock, app.prompt, app.quiet_s, say=app.chat.notice)
    app.push_screen(screen, partial(gate_answered, app))


def gate_answered(app: Host, value: str | None) -> None:
    app.prompt.focus()
    if value is None:
        app.chat.notice("no done check set: asked again at the next start (or from Ctrl+P)")
        return
    set_gate(app, value)


def set_gate(app: Host, value: str) -> None:
    if app.runner is not None:
        app.runner.call(lambda session: session.set_gate(value))


def gate_commands(app: Host) -> Iterator[SystemCommand]:
    from ..adapters.registry import resolve_stack_for_run

    try:
        stack = resolve_stack_for_run(app.settings.workspace, app.settings)
    except Exception:  # noqa: BLE001 - detection failing must not take the palette with it
        return
    current = app.settings.done.gate
    if stack.detected and current != "auto":
        yield SystemCommand(
            f"Done check: use {stack.detected}",
            "Run the detected check when the model says it is done (saved for this workspace)",
            partial(set_gate, app, "auto"),
        )
    if current != "off":
        yield SystemCommand(
            "Done check: off",
            "Take the model's word when it says it is done (saved for this workspace)",
            partial(set_gate, app, "off"),
        )


# --- notes, lessons, skills, sessions -----------------------------------------------------------


def memory_commands(app: Host) -> Iterator[SystemCommand]:
    session = _session(app)
    for note in (_ask(session, "notes", default=[]) or [])[:LISTED]:
        yield SystemCommand(
            f"Forget note: {_short(note.text)}",
            "Remembered across sessions; forget it for good",
            partial(forget, app, "forget_note", note.id, note.text),
        )
    for lesson in (_ask(session, "lessons", default=[]) or [])[:LISTED]:
        yield SystemCommand(
            f"Forget lesson: {_short(lesson.text)}",
            f"Learnt from an earlier failure (seen {lesson.seen}x); forget it for good",
            partial(forget, app, "forget_lesson", lesson.id, lesson.text),
        )
    for name, description in (_ask(session, "skills", default=[]) or [])[:LISTED]:
        yield SystemCommand(
            f"Load skill: {name}",
            description or "Give the model this skill's text with the next request",
            partial(load_skill, app, name),
        )


def forget(app: Host, method: str, item_id: int, text: str) -> None:
    if _ask(_session(app), method, item_id, default=False):
        app.chat.notice(f"forgotten: {_short(text)}")
    else:
        app.chat.notice(f"could not forget: {_short(text)} (already gone?)", "warning")


def load_skill(app: Host, name: str) -> None:
    if app.runner is not None:
        app.runner.call(lambda session: session.load_skill(name))


def session_commands(app: Host) -> Iterator[SystemCommand]:
    from ..session.listing import list_sessions

    current = getattr(getattr(_session(app), "bus", None), "session_id", None)
    try:
        sessions = list_sessions(app.settings.workspace)
    except Exception:  # noqa: BLE001 - an unreadable log lists nothing, the palette still opens
        return
    # A foreign log (not written by this harness for the person here) is never resumed: not
    # offered either (`cerveau sessions` lists it, marked).
    for s in [s for s in sessions if s.id != current and not s.foreign][:LISTED]:
        yield SystemCommand(
            f"Resume session: {_short(s.first_task) or s.id}",
            f"{s.id} · {s.turns} turns · {s.status} · last active {s.last_active[:16]}",
            partial(app.resume_session, s.id),
        )


def _short(text: str, n: int = 60) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= n else line[: n - 1] + "…"
