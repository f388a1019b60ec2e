"""Rewind from the app: the list, the question, the rewind, and the chat redrawn after it.

Everything that touches the session's rewinder (session/rewind/: it reads blobs and hashes the
workspace) runs on the engine thread, queued with the turns (`SessionRunner.call`), so a rewind
never races a turn and the UI thread hashes nothing. Each step comes back to the UI thread with
`call_from_thread`:

  Esc Esc / palette -> [engine] rewinder.turns()        -> the list (screens/rewind.py)
  Enter on a turn   -> [engine] rewinder.preview(turn)  -> the question (b / c / v, then k / o)
  the answer        -> [engine] rewinder.rewind(...)    -> the chat redrawn from the cut history

The rewinder refuses (OutsideChanges) when a file changed outside the harness would be
overwritten; the dialog then asks about exactly those files. "Rewind the last turn" (what undo
was) is the same question for the newest turn, without the list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

from .messages import EngineEvent
from .replay import redraw_items
from .runner import SessionRunner
from .screens.rewind import (
    ForwardRow,
    RewindChoice,
    RewindListScreen,
    RewindPreview,
    RewindScreen,
    TurnRow,
)

if TYPE_CHECKING:  # the session's machinery is imported when the engine thread builds it
    from ..config import Settings
    from ..session import Session
    from ..session.rewind import Rewinder, RewindMode

#: Events the redraw leaves out: the session sends the plan report of the point rewound to.
NOT_REDRAWN = frozenset({"plan_report"})

FORWARD_HINT = "Esc Esc, then forward, undoes this rewind"

MODE_WORDS = {
    "both": "code and conversation",
    "code": "code only",
    "conversation": "conversation only",
}


class Host(Protocol):
    """What rewinding needs of the app (app.py's CerveauApp)."""

    busy: bool
    runner: SessionRunner | None
    clock: Callable[[], float]
    quiet_s: float
    settings: Settings
    router: Any
    last_rewind: LastRewind

    @property
    def chat(self) -> Any: ...
    @property
    def prompt(self) -> Any: ...
    def push_screen(self, screen: Any, callback: Any = None) -> Any: ...
    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any: ...


@dataclass
class LastRewind:
    """What the forward row says: the last rewind this app did (the rewinder knows it can go
    forward; which turn it went back to is the app's memory)."""

    to_turn: int = 0
    at: str = ""


def _rw(session: Session | None) -> Rewinder | None:
    """The session's rewinder (session/rewind/), None while the session starts."""
    return session.rewinder if session is not None else None


def rewinder_of(app: Host) -> Any:
    return _rw(app.runner.session if app.runner is not None else None)


def available(app: Host) -> bool:
    return not app.busy and rewinder_of(app) is not None


def _hhmm(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%H:%M")
    except (TypeError, ValueError):
        return "?"


def rows_of(rewinder: Any, last: LastRewind) -> list[TurnRow | ForwardRow]:
    """The list's rows, oldest first, from the rewinder's turns and the points before the
    person's `!cmd`s (engine thread)."""
    rows: list[TurnRow | ForwardRow] = [
        TurnRow(
            number=int(t.turn),
            task=str(t.task),
            at=_hhmm(str(t.time)),
            files_changed=int(t.files_changed),
            added=int(t.added),
            removed=int(t.removed),
            undone=not bool(t.current),
            point=str(t.point_id) if t.at == "command" else "",
            label=str(t.label or t.turn),
        )
        for t in rewinder.entries()
    ]
    if rewinder.can_forward():
        rows.append(ForwardRow(last.to_turn, last.at))
    return rows


def preview_of(rewinder: Any, target: TurnRow | ForwardRow) -> RewindPreview:
    """What the dialog says a rewind would do (engine thread). A forward has no preview: its
    outside changes, if any, are found when it is tried, and asked about then."""
    if isinstance(target, ForwardRow):
        return RewindPreview(target)
    # A turn rewound away has no conversation to go back to: its code only.
    mode = "code" if target.undone else "both"
    if target.command:  # the turns after the turn it follows go
        p = rewinder.preview_point(target.point, mode)
        dropped = sum(1 for t in rewinder.turns() if t.current and t.turn > target.number)
    else:
        p = rewinder.preview(target.number, mode)
        dropped = sum(1 for t in rewinder.turns() if t.current and t.turn >= target.number)
    return RewindPreview(
        target,
        files=len(p.changes),
        turns_dropped=dropped,
        conflicts=list(p.outside),
        changes=list(p.changes),
    )


# --- the steps ------------------------------------------------------------------------------------


def open_list(app: Host) -> None:
    """Esc Esc on an empty prompt with no turn running, or the palette's "Rewind…"."""
    if app.busy:
        app.chat.notice("a turn is running: Esc Esc interrupts it; rewind once it ends", "warning")
        return
    if rewinder_of(app) is None:
        starting = app.runner is not None and app.runner.session is None
        app.chat.notice(
            "the session is still starting: nothing to rewind yet"
            if starting
            else "rewind is not available in this session",
            "warning",
        )
        return
    runner = app.runner
    assert runner is not None
    last = _last(app)
    runner.call(lambda session: _engine(app, _listed, lambda: rows_of(_rw(session), last)))


def rewind_last(app: Host) -> None:
    """The palette's "Rewind the last turn" (what undo was): the question for the newest turn
    still in the conversation, without the list."""
    runner = app.runner
    if runner is None or app.busy:
        return
    if rewinder_of(app) is None:
        app.chat.notice("rewind is not available in this session", "warning")
        return
    last = _last(app)

    def newest(session: Any) -> RewindPreview | None:
        rows = [r for r in rows_of(_rw(session), last) if isinstance(r, TurnRow)]
        current = [r for r in rows if not r.undone and not r.command]
        return preview_of(_rw(session), current[-1]) if current else None

    runner.call(lambda session: _engine(app, _previewed, lambda: newest(session)))


def _last(app: Host) -> LastRewind:
    return app.last_rewind


def _engine(app: Host, then: Callable[[Host, Any], None], work: Callable[[], Any]) -> None:
    """On the engine thread: `work`, then `then(app, its result)` on the UI thread; a failure
    is said in the chat."""
    try:
        result = work()
    except Exception as exc:  # noqa: BLE001 - said, never a dead engine thread
        _ui(app, _said, f"rewind: {exc}", "error")
        return
    _ui(app, then, result)


def _ui(app: Host, fn: Callable[..., None], *args: Any) -> None:
    try:
        app.call_from_thread(fn, app, *args)
    except RuntimeError:  # the app is gone (quit while the rewinder worked)
        pass


def _said(app: Host, text: str, level: str) -> None:
    app.chat.notice(text, level)


def _listed(app: Host, rows: list[TurnRow | ForwardRow]) -> None:
    if app.busy:
        return  # a turn started meanwhile: the list would be of a past that is moving
    app.push_screen(RewindListScreen(rows, sink=app.prompt), partial(_picked, app))


def _picked(app: Host, target: TurnRow | ForwardRow | None) -> None:
    app.prompt.focus()
    if target is None or app.runner is None:
        return
    app.runner.call(
        lambda session: _engine(app, _previewed, lambda: preview_of(_rw(session), target))
    )


def _previewed(app: Host, preview: RewindPreview | None, mode: str | None = None) -> None:
    if preview is None:
        app.chat.notice("no turn to rewind", "info")
        return
    if app.busy:
        return
    screen = RewindScreen(
        preview, app.clock, app.prompt, app.quiet_s, say=app.chat.notice, mode=mode
    )
    app.push_screen(screen, partial(_answered, app, preview))


def _answered(app: Host, preview: RewindPreview, choice: RewindChoice | None) -> None:
    app.prompt.focus()
    if choice is None or app.runner is None:
        return
    if app.busy:  # Enter typed into the dialog sent a turn: the point it was asked for moved
        app.chat.notice(
            "a turn started: nothing was rewound (Esc Esc again once it ends)", "warning"
        )
        return
    keep = preview.conflicts if choice.keep else []
    app.runner.call(partial(_rewind, app, choice, keep))


def _rewind(app: Host, choice: RewindChoice, keep: list[str], session: Session) -> None:
    """Engine thread: the rewind itself, then the chat redrawn from the cut history."""
    from ..session.rewind import OutsideChanges

    rewinder = _rw(session)
    assert rewinder is not None  # the list is offered only with one
    target = choice.target
    mode = cast("RewindMode", choice.mode)  # not "forward": that one's target is a ForwardRow
    transcript: list[Any] | None
    try:
        if isinstance(target, ForwardRow):
            result = rewinder.forward(force=choice.overwrite, keep=keep)
            transcript = list(rewinder.transcript())  # the chat as it was before the rewind
        else:
            if target.command:
                result = rewinder.rewind_to_point(
                    target.point, mode, force=choice.overwrite, keep=keep
                )
            else:
                result = rewinder.rewind(target.number, mode, force=choice.overwrite, keep=keep)
            transcript = list(rewinder.transcript()) if mode != "code" else None
    except OutsideChanges as exc:
        # Changed since the preview (or a forward, which has none): asked about those files.
        again = RewindPreview(target, conflicts=list(exc.paths))
        _ui(app, _previewed, again, choice.mode)
        return
    except Exception as exc:  # noqa: BLE001 - a refused rewind is said, the session goes on
        _ui(app, _said, f"rewind not done: {exc}", "error")
        return
    _ui(app, _redrawn, choice, result, transcript)


def _redrawn(app: Host, choice: RewindChoice, result: Any, transcript: list[Any] | None) -> None:
    """UI thread. What the rewind emitted is drained first (its plan report reaches the views),
    then the chat is the rewound conversation and one line says what happened."""
    target = choice.target
    last = _last(app)
    if isinstance(target, ForwardRow):
        last.to_turn, last.at = 0, ""
    else:
        last.to_turn, last.at = (0 if target.command else target.number), _now(app)
    app.router.drain()
    chat = app.chat
    if transcript is not None:
        chat.clear()
        items = redraw_items(transcript, app.settings.show_reasoning)
        for item in items:
            if isinstance(item, EngineEvent) and item.type in NOT_REDRAWN:
                continue
            app.router.apply(item)
        chat.settle()
        # The rewinder's own line went with the old chat: said again, with the way back.
        chat.notice(summary(choice, result), "warning" if result.refused else "info")
    elif not isinstance(target, ForwardRow):
        chat.notice(FORWARD_HINT)  # the rewinder's line (describe.rewound_line) said the rest
    chat.follow()
    app.router.grants()  # the header: the grants in force at the point rewound to


def _now(app: Host) -> str:
    return datetime.now().astimezone().strftime("%H:%M")


def summary(choice: RewindChoice, result: Any) -> str:
    target = choice.target
    if isinstance(target, ForwardRow):
        head = "forward: the rewind is undone"
    else:
        head = f"rewound to just before {target.what()} ({MODE_WORDS[choice.mode]})"
    parts = [head]
    back = len(result.restored) + len(result.removed)
    if choice.mode != "conversation" or isinstance(target, ForwardRow):
        parts.append(f"{back} file{'' if back == 1 else 's'} put back")
    if result.kept:
        parts.append("kept as you had them: " + ", ".join(result.kept[:8]))
    if result.outside:
        # After a forward no forward is left: the point it took first (--list --all) has them.
        again = (
            "`cerveau rewind --list --all` has them, the last 'rewind' point"
            if isinstance(target, ForwardRow)
            else "forward gets them back"
        )
        parts.append(f"overwritten ({again}): " + ", ".join(result.outside[:8]))
    if result.refused:
        parts.append("NOT put back: " + ", ".join(result.refused[:8]))
    if not isinstance(target, ForwardRow):
        parts.append("Esc Esc, forward undoes it")
    return "; ".join(parts)
