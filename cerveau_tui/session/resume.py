"""Resuming a stored session: it keeps its id and appends to its own log (as `codex resume`
does), and everything the log rebuilds is put back before the first turn.

What comes back: the history exactly as the model saw it (so the first request of the resumed
session carries the earlier conversation, tool results included), the compacted window, the
plan (its events and writes, the session's plan ledger), the session grants, each turn's status
(the restore points are the rewinder's: session/rewind/). `--continue` is this on the most
recent session: the plan carry-over it did before is part of it, not a second mechanism.

A turn a crash cut off (started, never ended) is closed in the log (a `cut` record), any tool
call of its last reply that never got a result gets one saying so (a server refuses a history
with a call left unanswered), and the model is told in one `[harness]` message to check the
workspace before going on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import protocol as P
from ..bus import Emitter
from ..config import Settings
from ..history import History, Message, Origin
from ..plan.persist import SessionLog
from ..policy.judge import Judge
from ..policy.policy import Policy
from ..protocol.records import CutRecord
from ..sandbox.base import Grant
from . import grant_seal
from .journal import Journal
from .listing import ResumeError, foreign_newer_than, resolve_session
from .stored import StoredSession, read_session

__all__ = ["ResumeError", "open_session_log", "restore"]

#: What the model reads first when its previous turn died with the app.
CUT_TURN_MESSAGE = (
    "[harness] Your previous turn was cut off when the app stopped: it did not finish, and "
    "whatever it was doing may be half-done. Check the workspace (the files and the state of "
    "what you were changing) before going on."
)
#: The result of a call the app never finished.
UNFINISHED_CALL = "[harness] not run to completion: the app stopped before this call finished"


def open_session_log(
    settings: Settings, bus: Emitter, resume: str | None
) -> tuple[SessionLog, StoredSession | None]:
    """This session's log, subscribed to the bus; with `resume` ("" or "last": the most recent,
    else an id) the stored session read back, and the bus continuing its id and sequence.
    Raises ResumeError (no session, a bad id, unreadable) and persist.SessionBusy."""
    stored = None
    if resume is not None:
        sid = resolve_session(settings.workspace, resume)
        log = SessionLog(settings.workspace, sid)  # takes the lock first: nobody appends mid-read
        try:
            stored = read_session(settings.workspace, sid)
        except Exception as exc:
            log.close()
            raise ResumeError(f"session {sid!r} cannot be read: {exc}") from None
        bus.session_id = sid
        # The sequence goes on where the log stopped: the report orders writes and checkpoints
        # by seq, and the plan state keys its events by (session, seq). Emitter has no setter.
        bus.continue_from(stored.last_seq)
    else:
        log = SessionLog(settings.workspace, bus.session_id)
    bus.subscribe(log)
    return log, stored


def restore(
    engine: Any, journal: Journal, stored: StoredSession, plan: Any, bus: Emitter
) -> dict[str, Any]:
    """Put the stored session back into this one's engine, policy and plan; says what
    came back (the SESSION_RESUMED payload, also returned). A failure closes the log (its lock
    held by a session that never started would refuse the next try) and is a ResumeError."""
    try:
        return _restore(engine, journal, stored, plan, bus)
    except Exception as exc:
        journal.log.close()
        raise ResumeError(f"session {stored.id!r} could not be restored: {exc}") from exc


def _restore(
    engine: Any, journal: Journal, stored: StoredSession, plan: Any, bus: Emitter
) -> dict[str, Any]:
    history = stored.history.messages
    cut = stored.open_turn
    window = _usable_window(engine, stored, bus)
    engine.restore(
        history=history,
        window=window,
        task=stored.turns[-1].input if stored.turns else "",
    )
    repaired = answer_unfinished_calls(engine.loop_state.history, stored.last_results)
    if cut is not None:
        engine.loop_state.history.append(Message.user(CUT_TURN_MESSAGE, Origin.HARNESS))
        # The message and the record closing the turn in one write: a kill now must leave the
        # turn open (told again next time) or closed with the model told, never closed untold.
        journal.flush(then=[CutRecord(turn_id=cut.turn_id).dump()])
        cut.reason = "interrupted"
    grants, dropped = restore_grants(engine.policy, stored, engine.workspace)
    plan.restore(stored.plan_events, stored.writes)  # the ledger: plan events AND writes
    # The engine holds the history now; the session keeps `stored` for its transcript only.
    stored.history = History()
    resumed = P.SessionResumed(
        session_id=stored.id,
        messages=len(history),
        turns=len(stored.turns),
        plan_events=len(stored.plan_events),
        grants=grants,
        grants_dropped=dropped,
        window=window is not None,
        interrupted_turn=cut.turn_id if cut is not None else None,
        unfinished_calls=repaired,
        torn_lines=stored.torn,
        last_reason=(stored.turns[-1].reason or "") if stored.turns else "",
        last_unmet=list(stored.turns[-1].unmet) if stored.turns else [],
    )
    bus.emit(resumed)
    plan.publish(bus)  # the views' first report: the restored ledger against the disk now
    # The event says what came back (every client renders it); a notice only for what the
    # person must know: a cut turn, grants that were not restored, lines a crash tore.
    warn = []
    if cut is not None:
        warn.append("its last turn was cut off when the app stopped (the model is told)")
    if dropped:
        warn.append(
            f"{dropped} session grant(s) in the log NOT restored (not sealed by your key here:"
            " a log from elsewhere?); they will be asked again"
        )
    if stored.torn:
        warn.append(f"{stored.torn} torn, invalid or unsealed line(s) in its log skipped")
    if stored.unknown:
        kinds = ", ".join(sorted(set(stored.unknown)))
        warn.append(f"{len(stored.unknown)} record(s) this version does not know skipped ({kinds})")
    passed_over = foreign_newer_than(engine.workspace, stored.id)
    if passed_over:
        warn.append(
            f"{len(passed_over)} newer session log(s) here not resumed, not written by this"
            f" harness for you (foreign: a cloned repository's?): {', '.join(passed_over[:5])}"
        )
    if warn:
        bus.emit(
            P.NoticePayload(
                text=f"resumed session {stored.id}: " + "; ".join(warn), source="session"
            ),
        )
    return resumed.wire()


def _usable_window(engine: Any, stored: StoredSession, bus: Emitter) -> dict[str, Any] | None:
    """The stored window when this engine can take it back; a malformed one is said and left
    out (the whole history is then the window, and the next request compacts it again)."""
    current = getattr(engine.loop_state, "window", None)
    if stored.window is None or current is None:
        return None
    try:
        type(current).from_dict(stored.window)
    except Exception as exc:  # noqa: BLE001 - WindowStateError, or a version this one lacks
        bus.emit(P.NoticePayload(text=f"compacted window not restored: {exc}"))
        return None
    upto = stored.window.get("upto")
    if not isinstance(upto, int) or upto > len(stored.history):
        bus.emit(P.NoticePayload(text="compacted window not restored: past the history"))
        return None
    return stored.window


def answer_unfinished_calls(history: History, results: dict[str, str] | None = None) -> int:
    """The last reply's tool calls without a result message get one: a history with a call left
    unanswered is refused by the server's template. The logged result when the call finished
    (killed between its event and its message: `results`, what the model was to read), else
    one saying it never did. Returns how many had none at all."""
    results = results or {}
    for i in range(len(history) - 1, -1, -1):
        m = history[i]
        if m.get("role") == "tool":
            continue
        if m.get("role") != "assistant" or not m.get("tool_calls"):
            return 0
        answered = {t.get("tool_call_id") for t in history[i + 1 :]}
        missing = [
            str(c.get("id"))
            for c in m["tool_calls"]
            if isinstance(c, dict) and c.get("id") not in answered
        ]
        for call_id in missing:
            done = call_id in results
            content = results[call_id] if done else UNFINISHED_CALL
            # A logged result's status is not in the log's output map: unknown, so left empty.
            history.append(Message.result(call_id, content, "" if done else "unfinished"))
        return sum(1 for c in missing if c not in results)
    return 0


def restore_grants(
    policy: Judge | None, stored: StoredSession, workspace: Path
) -> tuple[list[str], int]:
    """Each stored "approve for this session" whose seal verifies, given back to the policy's
    grant book (not through grant_session: its listener, the journal, has it in the log already).
    Returns (the scopes restored, spelled out; how many were dropped for a seal that did not
    verify). A judge that is not the policy (a test's) has no book to restore."""
    if not isinstance(policy, Policy) or not stored.grants:
        return [], 0
    key = grant_seal.load_key(create=False)
    restored: list[str] = []
    dropped = 0
    for g in stored.grants.values():
        if not grant_seal.verify(key, g.model_dump(), g.mac, stored.id, workspace):
            dropped += 1
            continue
        room = Grant(
            extra_writable=tuple(Path(p) for p in g.extra_writable),
            network=g.network,
            hosts=tuple(g.hosts),
        )
        policy.grants.grant(g.scope_key, g.scope, room)
        restored.append(g.scope)
    return restored, dropped
