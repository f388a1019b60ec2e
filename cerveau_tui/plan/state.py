"""The plan ledger: ONE record per session of what every plan view is computed from.

It holds the plan's own events (plan_committed, plan_updated, checkpoint) and the session's
writes (the seq of the last successful write of each path), which is all `build_report_at`
reads. Before, four holders kept their own copies: this state (plan events only), the PlanHook
(writes, from the bus), the session log (both, rebuilt on demand) and the TUI's feed (every plan
event it saw, with its own fingerprinter on the UI thread). A resume gave the first its plan
events and no writes, the hook and the log nothing (the TUI redrew the stored events, `cerveau
report` read the whole log), so for the same step the model's guidance and the resume brief said
"pending" while the strip and `cerveau report` said "done_unconfirmed", and `Session.report()`
was empty.

Now every view is `reconciled()` of this one object: the PlanHook's guidance and resume brief,
`Session.report()`, `cerveau report` (a ledger folded from the stored log), and the TUI, which
renders the `plan_report` events `publish` sends from the loop's worker thread (the UI thread
never hashes a file). Persisted by the session log (its events are the ledger's input) and
restored on resume (`restore`, from session/stored.py's fold of the same lines).

`apply` is idempotent per event, so the same object may both subscribe to the bus and be fed
directly by whoever emitted.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..protocol import (
    CheckpointPayload,
    Event,
    PlanCommitted,
    PlanReported,
    PlanUpdated,
    ToolResultPayload,
)
from .models import PlanReport
from .report import build_report, build_report_at, written_paths

if TYPE_CHECKING:
    from ..bus import Emitter
    from ..workspace.fingerprint.fingerprinter import Fingerprinter

PLAN_EVENT_TYPES = frozenset(
    {PlanCommitted.event_type, PlanUpdated.event_type, CheckpointPayload.event_type}
)


class PlanState:
    def __init__(
        self,
        events: Iterable[Event] = (),
        *,
        workspace: Path | None = None,
        fingerprinter: Fingerprinter | None = None,
    ) -> None:
        self.events: list[Event] = []  # the plan's own events, in the order seen
        #: rel path -> seq of the last successful tool_result that wrote it: what the report
        #: reads of a write. Not the events: a write_file's payload holds the whole file.
        self.writes: dict[str, int] = {}
        self.workspace = workspace
        self.fingerprinter = fingerprinter
        self._seen: set[tuple[str, int]] = set()
        self._lock = threading.Lock()
        self._report: PlanReport | None = None
        self._published: dict[str, object] | None = None
        for ev in events:
            self.apply(ev)

    def __call__(self, event: Event) -> None:
        """Bus subscriber form."""
        self.apply(event)

    def apply(self, event: Event) -> None:
        if event.type == ToolResultPayload.event_type:
            wrote = written_paths([event])
            if wrote:
                with self._lock:
                    for rel, seq in wrote.items():
                        self.writes[rel] = max(seq, self.writes.get(rel, 0))
            return
        if event.type not in PLAN_EVENT_TYPES:
            return
        key = (event.session_id, event.seq)
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
            self.events.append(event)
            self._report = None

    def restore(self, events: Iterable[Event], writes: Mapping[str, int]) -> None:
        """A resumed session's plan events and writes, as its log holds them."""
        for ev in events:
            self.apply(ev)
        with self._lock:
            for rel, seq in writes.items():
                self.writes[rel] = max(seq, self.writes.get(rel, 0))

    def rewind_to(self, seq: int, writes: Mapping[str, int]) -> list[Event]:
        """A conversation rewound to bus position `seq` (session/rewind/): the plan events after
        it leave (returned, for a forward), the writes are as they were then."""
        with self._lock:
            gone = [e for e in self.events if e.seq > seq]
            self.events = [e for e in self.events if e.seq <= seq]
            self._seen -= {(e.session_id, e.seq) for e in gone}
            self.writes = dict(writes)
            self._report = None
        return gone

    def report(self) -> PlanReport:
        """The plan from its events alone (what the plan tools check an update against)."""
        with self._lock:
            if self._report is None:
                self._report = build_report(self.events)
            return self._report

    @property
    def revision(self) -> int:
        return self.report().revision

    def report_events(self) -> list[Event]:
        """What build_report_at reads: the plan events and one write record per path, by seq."""
        with self._lock:
            sid = self.events[0].session_id if self.events else "ledger"
            writes = [
                Event(
                    type=ToolResultPayload.event_type,
                    session_id=sid,
                    seq=seq,
                    payload={"ok": True, "wrote": [rel]},
                )
                for rel, seq in self.writes.items()
            ]
            return sorted([*self.events, *writes], key=lambda e: e.seq)

    def reconciled(self) -> PlanReport:
        """The report every view shows: the events reconciled with the files on disk. Without a
        workspace (a bare tool test) only the events speak."""
        if self.workspace is None:
            return self.report()
        return build_report_at(self.report_events(), self.workspace, self.fingerprinter)

    def publish(self, bus: Emitter) -> PlanReport | None:
        """Send the reconciled report as a `plan_report` event when it differs from the last one
        sent (none while no plan was ever committed). Called on the loop's worker thread, at the
        points a turn may have changed it: the views render what arrives and compute nothing."""
        if not self.events:
            return None
        report = self.reconciled()
        wire = report.to_json()
        with self._lock:
            if wire == self._published:
                return None
            self._published = wire
        bus.emit(PlanReported.model_validate(wire))
        return report
