"""The journal: what the session log must hold beyond events for the whole session to rebuild.

Events say what happened; they do not say what the model saw. So, through the same log file
(plan/persist.SessionLog, opened beneath the workspace without following links), the journal
writes the records session/stored.py folds back:

- the history, message by message: the journal listens to History.append (cerveau_tui/history.py)
  and writes what it heard just before the event that follows (SessionLog's prelude), so the
  order on disk is the order in memory. Each record keeps the message's origin and a result's
  status beside the wire dict, so a resume reads structure, not wording. (Logs written before
  that hold the wire dict alone, and `reset` records from when a compaction replaced the history;
  session/stored.py reads both);
- the compacted window's state at each `compacted` event;
- each session grant (sealed: session/grant_seal.py) and revoke (fsync'd: the person's decision),
  told by the policy (its `listener`: policy/judge.py GrantListener);

fsync is paid at turn ends, approvals, grants and compactions (persist.DURABLE), never per
message or token: a kill loses nothing the kernel had, a power loss at most the open turn's tail.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..history import Message
from ..loop.state import EngineState
from ..plan.persist import SessionLog
from ..policy.verdict import Verdict
from ..protocol import Compacted, Event
from ..protocol.records import GrantRecord, MessageRecord, RevokeRecord, WindowRecord
from . import grant_seal


class Journal:
    def __init__(self, log: SessionLog, state: EngineState, workspace: Path) -> None:
        self.log = log
        self.state = state
        self.workspace = workspace
        self._heard: list[Message] = []  # appended since the last write
        self._lock = threading.Lock()  # appends and events can come from two threads
        state.history.listen(self._append)
        log.prelude = self._prelude

    def _append(self, message: Message) -> None:
        with self._lock:
            self._heard.append(message)

    def _prelude(self, event: Event) -> list[dict[str, Any]]:
        out = self._messages()
        if event.type == Compacted.event_type:
            out.append(WindowRecord(state=self.state.window.to_dict()).dump())
        return out

    def _messages(self) -> list[dict[str, Any]]:
        with self._lock:
            heard, self._heard = self._heard, []
        return [message_record(m) for m in heard]

    def flush(self, then: list[dict[str, Any]] | None = None) -> None:
        """History appended with no event after it (a `!cmd` at the end): written now, in one
        write with the records `then` (a kill cannot keep one without the other)."""
        self.log.append(list(then or []), durable=True, pending=self._messages)

    # -- grants -----------------------------------------------------------------------------------

    def granted(self, verdict: Verdict) -> None:
        if not verdict.scope_key:
            return
        g = verdict.grant
        record = GrantRecord(
            scope_key=verdict.scope_key,
            scope=verdict.scope or verdict.scope_key,
            extra_writable=[str(p) for p in (g.extra_writable if g else ())],
            network=bool(g.network) if g else False,
        )
        if g is not None and g.network and g.hosts:
            # The hosts the proxy lets it reach (none written: any host, as before they existed).
            record.hosts = list(g.hosts)
        # Sealed with the person's key: only a grant this person gave here comes back on resume.
        key = grant_seal.load_key()
        record.mac = grant_seal.seal(key, record.dump(), self.log.session_id, self.workspace)
        self.log.append([record.dump()], durable=True)

    def revoked(self, scope_key: str) -> None:
        self.log.append([RevokeRecord(scope_key=scope_key).dump()], durable=True)


def message_record(m: Message) -> dict[str, Any]:
    """One history message as the log holds it: the wire dict as sent, who put it there, and a
    result's status (what the brief's "denied" reads after a resume)."""
    record = MessageRecord(m=m.wire, origin=str(m.origin))
    if m.status:
        record.status = m.status
    return record.dump()
