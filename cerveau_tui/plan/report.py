"""build_report and build_report_at: a plan's state derived from the session's events.

Checkpoints are written only when a step completes. A step cut short by a guard denial, an
interrupt or a stall leaves real files on disk and no completion event, so an event-only report
shows "pending" for work that is plainly done. build_report_at reconciles against the filesystem
at the source, once, so that every view renders the same answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from ..protocol import CheckpointPayload, Event, PlanCommitted, PlanUpdated, ToolResultPayload
from ..protocol.records import payload_as
from ..workspace.fingerprint.fingerprinter import Fingerprinter
from .models import PlanReport, PlanRevision, PlanStep, StepReport, StepStatus
from .paths import covers, is_pattern, norm_rel

T = TypeVar("T")


@dataclass
class _Progress:
    status: StepStatus = StepStatus.PENDING
    note: str | None = None
    checkpoint: dict[str, str | None] | None = None
    checkpoint_seq: int = 0
    title: str = ""
    files: tuple[str, ...] = ()
    evidence: list[str] = field(default_factory=list)


def parse_steps(raw: Any) -> list[PlanStep]:
    """Validate a plan_committed payload's steps: ids filled in by position, duplicates dropped."""
    steps: list[PlanStep] = []
    seen: set[str] = set()
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        try:
            step = item if isinstance(item, PlanStep) else PlanStep.model_validate(item)
        except ValidationError:
            continue
        sid = step.id.strip() or str(i + 1)
        if sid in seen:
            continue
        seen.add(sid)
        steps.append(
            step.model_copy(
                update={"id": sid, "files": [norm_rel(f) for f in step.files if norm_rel(f)]}
            )
        )
    return steps


def build_report(events: Iterable[Event]) -> PlanReport:
    """Each step's status from plan_committed / plan_updated / checkpoint events alone.

    The last status event for a step wins (a step reopened after its checkpoint is in progress
    again). A re-committed plan keeps the progress of a step that survives under the same id,
    unless both its title and its files changed: then the id was reused for different work.
    """
    progress: dict[str, _Progress] = {}
    current: list[PlanStep] = []
    history: list[PlanRevision] = []
    plan_files: list[str] = []
    source: str | None = None
    for ev in events:
        if committed := payload_as(PlanCommitted, ev):
            current = parse_steps(committed.steps)
            source, path = committed.source, committed.path
            if source == "file" and path is not None and path not in plan_files:
                plan_files.append(norm_rel(path))
            history.append(
                PlanRevision(
                    revision=len(history) + 1,
                    source=source,
                    seq=ev.seq,
                    step_ids=[s.id for s in current],
                    path=path,
                )
            )
            for s in current:
                prog = progress.get(s.id)
                if prog is not None and prog.title != s.title and set(prog.files) != set(s.files):
                    prog = None
                if prog is None:
                    prog = progress[s.id] = _Progress()
                prog.title, prog.files = s.title, tuple(s.files)
        elif updated := payload_as(PlanUpdated, ev):
            prog = progress.get(updated.step_id)
            if prog is None:
                continue  # an update for a step no plan declared: nothing to attach it to
            prog.status = StepStatus(updated.status)
            prog.evidence.append(f"marked {updated.status} (event {ev.seq})")
            if updated.note:
                prog.note = updated.note
        elif checkpoint := payload_as(CheckpointPayload, ev):
            prog = progress.get(checkpoint.step_id)
            if prog is None:
                continue
            hashes = checkpoint.hashes
            prog.status = StepStatus.DONE
            prog.checkpoint = {norm_rel(k): v for k, v in hashes.items()}
            prog.checkpoint_seq = ev.seq
            prog.evidence.append(f"checkpoint (event {ev.seq}, {len(hashes)} files)")
    steps = [
        StepReport(
            id=s.id,
            title=s.title,
            files=list(s.files),
            check=s.check,
            order=i,
            status=progress[s.id].status,
            note=progress[s.id].note,
            checkpoint=progress[s.id].checkpoint,
            evidence=list(progress[s.id].evidence),
        )
        for i, s in enumerate(current)
    ]
    return PlanReport(
        steps=sorted_plan(steps),
        revision=len(history),
        source=source,
        history=history,
        plan_files=plan_files,
    )


def written_paths(events: Iterable[Event]) -> dict[str, int]:
    """rel path -> seq of the last successful tool_result that wrote it (payload `wrote`)."""
    out: dict[str, int] = {}
    for ev in events:
        # Read as a dict: the plan ledger's own write records (PlanState.report_events) are
        # tool_results of `ok` and `wrote` alone; `paths` is what older versions wrote.
        if ev.type == ToolResultPayload.event_type:
            p = ev.payload
            if p.get("ok", True):
                for raw in p.get("wrote") or p.get("paths") or ():
                    if isinstance(raw, str):
                        out[norm_rel(raw)] = ev.seq
    return out


def build_report_at(
    events: Sequence[Event], workspace: Path, fingerprinter: Fingerprinter | None = None
) -> PlanReport:
    """build_report, reconciled with the files on disk.

    - done with a checkpoint: a checkpointed file now gone -> missing; one whose hash differs ->
      changed (missing wins: it is the stronger claim).
    - pending or in progress with declared files: when every declared file exists and was written
      in this session after the last checkpoint (of any step) that covered it -> done_unconfirmed.
      The "after" matters: two steps often share a file, and step 1's writes must not make step 3
      look finished.
    """
    report = build_report(events)
    if not report.steps:
        return report
    fp = fingerprinter if fingerprinter is not None else Fingerprinter(workspace)
    writes = written_paths(events)
    # For each file, the seq of the latest checkpoint that recorded it: writes before it are
    # accounted for by that step.
    settled: dict[str, int] = {}
    for ev in events:
        if checkpoint := payload_as(CheckpointPayload, ev):
            for rel in checkpoint.hashes:
                settled[norm_rel(rel)] = ev.seq
    steps = [_reconcile(s, fp, writes, settled, workspace) for s in report.steps]
    return report.model_copy(update={"steps": steps})


def _reconcile(
    step: StepReport,
    fp: Fingerprinter,
    writes: dict[str, int],
    settled: dict[str, int],
    workspace: Path,
) -> StepReport:
    if step.status == StepStatus.DONE and step.checkpoint:
        missing: list[str] = []
        changed: list[str] = []
        for rel, digest in step.checkpoint.items():
            now = fp.hash_file(rel)
            if digest is not None and now is None:
                missing.append(rel)
            elif now != digest:
                changed.append(rel)
        if missing:
            ev = [*step.evidence, *(f"{r}: checkpointed, now missing" for r in missing)]
            return step.model_copy(update={"status": StepStatus.MISSING, "evidence": ev})
        if changed:
            ev = [*step.evidence, *(f"{r}: changed since checkpoint" for r in changed)]
            return step.model_copy(update={"status": StepStatus.CHANGED, "evidence": ev})
        return step
    if step.status not in (StepStatus.PENDING, StepStatus.IN_PROGRESS) or not step.files:
        return step
    found: list[str] = []
    for declared in (norm_rel(f, workspace) for f in step.files):
        if is_pattern(declared):
            hits = [
                w for w, seq in writes.items() if covers(declared, w) and seq > settled.get(w, 0)
            ]
            if not hits or not any(fp.hash_file(h) is not None for h in hits):
                return step
            found.extend(sorted(hits))
            continue
        if writes.get(declared, 0) <= settled.get(declared, 0) or fp.hash_file(declared) is None:
            return step
        found.append(declared)
    ev = [*step.evidence, f"on disk, written this session, no completion event: {', '.join(found)}"]
    return step.model_copy(update={"status": StepStatus.DONE_UNCONFIRMED, "evidence": ev})


_NUM = re.compile(r"(\d+)")


def _natural(key: str) -> tuple[Any, ...]:
    return tuple(int(t) if t.isdigit() else t.lower() for t in _NUM.split(key))


def sorted_plan(steps: Iterable[T]) -> list[T]:
    """The plan in one stable order for every client: committed order (`order`), then by id
    compared naturally ("2" before "10"), so steps gathered from events in any order render alike.
    Items without `order` keep their input position."""
    indexed = list(enumerate(steps))
    indexed.sort(
        key=lambda pair: (
            getattr(pair[1], "order", pair[0]),
            _natural(str(getattr(pair[1], "id", ""))),
        )
    )
    return [item for _, item in indexed]
