"""`cerveau run`: one turn, headless. The same turn primitives as the TUI; only the client differs.

Nobody is there to approve, so crossings are denied (and each denial is an event) unless the person
said `--yes` together with `--sandbox full-access`, i.e. chose to have no boundary at all.

`resume`: a stored session's id (cli resolved `last` and checked it): this turn continues it.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from .bus import Emitter
from .config import Settings
from .loop.approver import ApproveAll, DenyAll
from .protocol import (
    TURN_COMPLETED,
    TURN_ERROR,
    ErrorPayload,
    Event,
    TokenPayload,
    ToolCallPayload,
    ToolResultPayload,
    TurnEnded,
    payload_of,
)
from .protocol.describe import call_line, describe, result_line
from .text_safety import json_visible, visible


class ReadableProgress:
    """Human-readable progress on a stream: the answer streamed, then the chat's own lines
    (protocol/describe.py) for everything else, so `cerveau run` reads as the chat does. A tool
    call, a card in the chat, is its head and its result, one line each."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.mid_line = False
        self._said_error = ""

    def _line(self, text: str) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.mid_line = False
        # Every line holds someone else's text (the model's, a command's output, the workspace
        # config's): its terminal controls are shown, never acted on (text_safety.py).
        self.out.write(visible(text) + "\n")
        self.out.flush()

    def __call__(self, ev: Event) -> None:
        p = payload_of(ev)
        match p:
            case TokenPayload(text=text):
                self.out.write(visible(text))
                self.out.flush()
                self.mid_line = not text.endswith("\n")
                return
            case ToolCallPayload():
                line: tuple[str, str] | None = call_line(p)
            case ToolResultPayload():
                line = result_line(p)
            case _:
                line = describe(p, self._said_error)
        if isinstance(p, ErrorPayload):
            self._said_error = p.message
        elif isinstance(p, TurnEnded):
            self._said_error = ""
        if line is not None and line[0]:
            self._line(line[0])


def run_headless(
    settings: Settings,
    task: str,
    *,
    as_json: bool,
    yes: bool = False,
    sandbox_flag: str | None = None,
    resume: str | None = None,
) -> int:
    from .sandbox.protect import StateDirUnwritable
    from .session import build_session
    from .session.boundary import said_at_start

    if yes and sandbox_flag != "full-access":
        print(
            "cerveau: --yes is only accepted together with --sandbox full-access", file=sys.stderr
        )
        return 2
    bus = Emitter()
    out = sys.stdout
    if as_json:

        def printer(ev: Event) -> None:
            try:
                line = ev.model_dump_json()
            except ValueError:  # a lone surrogate the model sent: escaped, not the event lost
                line = json.dumps(ev.model_dump(mode="json"))
            out.write(json_visible(line) + "\n")
            out.flush()

        bus.subscribe(printer)
    else:
        bus.subscribe(ReadableProgress(out))
    approver: Any = ApproveAll() if yes else DenyAll()
    from .state_home import chosen

    if (alt := chosen(settings.workspace)) is not None:  # --state-dir, state_dir (state_home.py)
        print(visible(f"cerveau: this workspace's state is kept in {alt}"), file=sys.stderr)
    try:
        session = build_session(settings, bus=bus, approver=approver, resume=resume)
    except StateDirUnwritable as exc:
        # Not a failure of the run but of where it was asked to run: the usage error's exit
        # code, one line a person can act on, and the same events a script reads.
        print(visible(f"cerveau: {exc}"), file=sys.stderr)
        error = ErrorPayload(message=str(exc), error_class="fatal")
        ended = TurnEnded(reason=TURN_ERROR, iterations=0, message=str(exc))
        bus.emit(error)
        bus.emit(ended)
        return 2
    except Exception as exc:  # a dead server, a failed provision: say so as an event, exit non-zero
        # On stderr too: a session that cannot be resumed (held by another cerveau, unreadable)
        # must be readable by a person who piped stdout away.
        print(visible(f"cerveau: could not start a session: {exc}"), file=sys.stderr)
        error = ErrorPayload(message=f"could not start a session: {exc}", error_class="fatal")
        ended = TurnEnded(reason=TURN_ERROR, iterations=0, message=str(exc))
        bus.emit(error)
        bus.emit(ended)
        return 1
    # Also on stderr: with --json on stdout, what the workspace config was refused must still
    # reach the person's eyes.
    for text in said_at_start(settings):
        print(visible(f"cerveau: {text}"), file=sys.stderr)
    try:
        outcome = session.engine.run(task)
    except KeyboardInterrupt:
        session.engine.interrupt()
        return 130
    finally:
        session.close()
    return 0 if outcome.reason == TURN_COMPLETED else 1
