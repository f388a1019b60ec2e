"""Payloads of the plan (commit, update, checkpoint, drift) and of the done gate (checks, the
seal, protected writes, the escalation ladder, rollback, park, polish) and the lessons it feeds."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import Payload


class PlanCommitted(Payload):
    event_type = "plan_committed"

    # Each step as plan/models.PlanStep dumps it (id, title, files, check): the foundation
    # cannot import plan/, and the plan reads them back through its own model.
    steps: list[dict[str, Any]] = Field(default_factory=list)
    revision: int = 0
    source: Literal["tool", "file"] = "tool"  # file: translated from a plan written to a file
    path: str | None = None  # the file it was translated from


class PlanUpdated(Payload):
    event_type = "plan_updated"

    step_id: str
    status: Literal["pending", "in_progress", "done"]
    note: str | None = None


class CheckpointPayload(Payload):
    event_type = "checkpoint"
    sparse: ClassVar[bool] = True  # no `check` key for a step without one

    step_id: str
    hashes: dict[str, str | None] = Field(default_factory=dict)  # rel -> blake3 (None: absent)
    check: str | None = None


class PlanReportStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    status: Literal["pending", "in_progress", "done", "done_unconfirmed", "changed", "missing"]
    files: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    note: str | None = None


class PlanReported(Payload):
    """plan/models.PlanReport.to_json(): the shape `cerveau report --json` prints, so a client
    compares them step for step. Sent by the loop's worker (plan/state.py, `publish`)."""

    event_type = "plan_report"

    revision: int = 0
    source: str | None = None
    steps: list[PlanReportStep] = Field(default_factory=list)
    total: int = 0
    done_count: int = 0
    changed_count: int = 0
    missing_count: int = 0
    current: str | None = None
    history: list[dict[str, Any]] = Field(default_factory=list)


class Drift(Payload):
    event_type = "drift"

    path: str
    step_id: str | None = None
    message: str = ""


class TouchedProtected(Payload):
    event_type = "touched_protected"

    paths: list[str]
    call_id: str = ""
    tool: str = ""
    text: str = ""


class CheckStarted(Payload):
    """The done check is running now: the status bar and the chat say so until its `check`.
    Without it a 30 s suite before the first request showed only "running … iter 0" (issue 33)."""

    event_type = "check_started"

    command: str = ""  # the criteria's commands, joined by "; "
    precheck: bool = False


class CheckPayload(Payload):
    event_type = "check"

    precheck: bool = False
    reused: bool = False
    # Issue 33's interface: the command, one word for the outcome (passed, failed, unavailable,
    # interrupted) and the failing tests by name, red said as plainly as green.
    command: str = ""
    state: str = ""
    failing: list[str] = Field(default_factory=list)  # test ids, as the runner names them
    failed: int = 0  # how many failed (the runner's own count when it printed one)
    cause: str = ""  # what stopped the suite itself: a collection error, "No module named ..."
    took_s: float = 0.0
    states: dict[str, str] = Field(default_factory=dict)  # criterion -> met/unmet/unavailable
    unmet: list[str] = Field(default_factory=list)
    errors: int = 0
    # The keys themselves (bounded): lessons pair an error with the edit that cleared it.
    error_lines: list[str] = Field(default_factory=list)
    touched_protected: list[str] = Field(default_factory=list)


class Escalation(Payload):
    event_type = "escalation"

    rung: str
    unmet: list[str] = Field(default_factory=list)
    text: str = ""
    change: str = ""


class Parked(Payload):
    event_type = "parked"

    handoff: str
    unmet: list[str] = Field(default_factory=list)
    path: str = ""
    text: str = ""


class Rollback(Payload):
    event_type = "rollback"

    paths: list[str] = Field(default_factory=list)
    errors: int = 0
    best: list[int] | None = None  # the best state seen, as done/near_green.py keeps it
    text: str = ""


class VerificationPayload(Payload):
    event_type = "verification"

    state: str  # the seal: passed, failed, stale, unverified, clean, ...
    unmet: list[str] = Field(default_factory=list)


class PolishPayload(Payload):
    event_type = "polish"

    result: Literal["kept", "reverted", "skipped"]
    reason: str = ""


class StoredLesson(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    kind: str
    text: str


class LessonsPayload(Payload):
    event_type = "lessons"

    stored: list[StoredLesson] = Field(default_factory=list)
    text: str = ""
