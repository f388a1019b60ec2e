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
from .protocol import TURN_COMPLETED, TURN_ERROR, ErrorPayload, Event, EventType, TurnEnded
from .text_safety import json_visible, visible


class ReadableProgress:
    """Human-readable progress on a stream: the answer streamed, one line per tool call."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.mid_line = False

    def _line(self, text: str) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.mid_line = False
        # Every line holds someone else's text (the model's, a command's output, the workspace
        # config's): its terminal controls are shown, never acted on (text_safety.py).
        self.out.write(visible(text) + "\n")
        self.out.flush()

    def __call__(self, ev: Event) -> None:
        p = ev.payload
        t = ev.type
        if t == EventType.TOKEN:
            self.out.write(visible(p.get("text", "")))
            self.out.flush()
            self.mid_line = not p.get("text", "").endswith("\n")
        elif t == EventType.TOOL_CALL:
            args = json.dumps(p.get("arguments", {}), ensure_ascii=False)
            self._line(f"-> {p.get('name')} {args[:200]}")
        elif t == EventType.TOOL_RESULT:
            first = (p.get("output") or "").strip().splitlines()[:1]
            mark = {"done": "ok", "failed": "failed", "denied": "denied", "guarded": "not run"}.get(
                p.get("status", ""), ""
            )
            self._line(f"   [{mark}] {first[0][:160] if first else ''}")
        elif t == EventType.APPROVAL_RESOLVED and p.get("decision") != "approved":
            self._line(f"   approval {p.get('decision')} ({p.get('by')}): {p.get('reason', '')}")
        elif t in (EventType.GUARD_TRIPPED,):
            self._line(f"!! guard {p.get('guard')}: {p.get('reason')}")
        elif t in (
            EventType.NOTICE,
            EventType.DRIFT,
            EventType.TOUCHED_PROTECTED,
            EventType.ESCALATION,
            EventType.ROLLBACK,
            EventType.PARKED,
        ):
            self._line(f"** {t}: {p.get('text') or p.get('message') or json.dumps(p)[:200]}")
        elif t == EventType.ERROR:
            self._line(f"!! error: {p.get('message')}")
        elif t == EventType.STACK_PROGRESS:
            frac = p.get("fraction")
            pct = f" {frac * 100:.0f}%" if isinstance(frac, (int, float)) else ""
            self._line(f"   stack: {p.get('stage')}{pct} {p.get('line', '')[:120]}")
        elif t == EventType.SESSION_RESUMED:
            grants = len(p.get("grants") or [])
            self._line(
                f"== resumed session {p.get('session_id')}: {p.get('turns')} turns, "
                f"{p.get('messages')} messages, {p.get('plan_events')} plan events, "
                f"{grants} session grant(s)"
            )
        elif t == EventType.TURN_ENDED:
            extra = f", verification {p['verification']}" if p.get("verification") else ""
            self._line(
                f"== turn ended: {p.get('reason')} after {p.get('iterations')} iterations{extra}"
            )


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
    try:
        session = build_session(settings, bus=bus, approver=approver, resume=resume)
    except StateDirUnwritable as exc:
        # Not a failure of the run but of where it was asked to run: the usage error's exit
        # code, one line a person can act on, and the same events a script reads.
        print(visible(f"cerveau: {exc}"), file=sys.stderr)
        error = ErrorPayload(message=str(exc), error_class="fatal")
        ended = TurnEnded(reason=TURN_ERROR, iterations=0, message=str(exc))
        bus.emit(EventType.ERROR, error.model_dump(mode="json", exclude_unset=True))
        bus.emit(EventType.TURN_ENDED, ended.model_dump(mode="json", exclude_unset=True))
        return 2
    except Exception as exc:  # a dead server, a failed provision: say so as an event, exit non-zero
        # On stderr too: a session that cannot be resumed (held by another cerveau, unreadable)
        # must be readable by a person who piped stdout away.
        print(visible(f"cerveau: could not start a session: {exc}"), file=sys.stderr)
        error = ErrorPayload(message=f"could not start a session: {exc}", error_class="fatal")
        ended = TurnEnded(reason=TURN_ERROR, iterations=0, message=str(exc))
        bus.emit(EventType.ERROR, error.model_dump(mode="json", exclude_unset=True))
        bus.emit(EventType.TURN_ENDED, ended.model_dump(mode="json", exclude_unset=True))
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
