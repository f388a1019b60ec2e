"""The shapes of a plan and of its report.

The report is ONE object: the chat's plan strip, the planner panel, `cerveau report` and the JSON
all render it, so they agree by construction instead of each reconciling events on its own.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator


class PlanStep(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = ""
    title: str
    files: list[str] = Field(default_factory=list, description="paths it will write")
    check: str | None = Field(default=None, description="optional command proving the step works")

    # Small models send `"id": 1` and `"files": "a.py, b.py"`; both are clear enough to accept
    # rather than bounce the whole plan back as an argument error.
    @field_validator("id", mode="before")
    @classmethod
    def _id_to_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int | float) else v

    @field_validator("files", mode="before")
    @classmethod
    def _files_to_list(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            return [p.strip() for p in re.split(r"[,\n]", v) if p.strip()]
        return v

    @field_validator("check", mode="before")
    @classmethod
    def _blank_check(cls, v: Any) -> Any:
        return None if isinstance(v, str) and not v.strip() else v


class StepStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"
    DONE_UNCONFIRMED = "done_unconfirmed"  # files on disk, no completion event
    CHANGED = "changed"  # completed, but a file no longer matches its checkpoint
    MISSING = "missing"  # completed, but a checkpointed file is gone


#: Statuses that count as finished work in `done_count`. CHANGED is finished work that a later
#: step edited again (the normal case when two steps share a file), so it still counts.
FINISHED = frozenset({StepStatus.DONE, StepStatus.DONE_UNCONFIRMED, StepStatus.CHANGED})


class StepReport(BaseModel):
    id: str
    title: str
    status: StepStatus = StepStatus.PENDING
    files: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    note: str | None = None
    check: str | None = None
    order: int = 0  # position in the committed plan; sorted_plan's key
    checkpoint: dict[str, str | None] | None = None  # rel -> digest at completion

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "status": str(self.status),
            "files": list(self.files),
            "evidence": list(self.evidence),
            "note": self.note,
        }


class PlanRevision(BaseModel):
    revision: int
    source: str  # "tool" | "file"
    seq: int
    step_ids: list[str]
    path: str | None = None  # the Markdown file a file-sourced plan came from


class PlanReport(BaseModel):
    steps: list[StepReport] = Field(default_factory=list)
    revision: int = 0  # 0: no plan was ever committed
    source: str | None = None
    history: list[PlanRevision] = Field(default_factory=list)
    plan_files: list[str] = Field(default_factory=list)  # Markdown files plans were read from

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total(self) -> int:
        return len(self.steps)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def done_count(self) -> int:
        return sum(1 for s in self.steps if s.status in FINISHED)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def changed_count(self) -> int:
        return sum(1 for s in self.steps if s.status == StepStatus.CHANGED)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def missing_count(self) -> int:
        return sum(1 for s in self.steps if s.status == StepStatus.MISSING)

    @property
    def current(self) -> StepReport | None:
        """The step being worked on: the first in progress, else the first not yet finished."""
        for s in self.steps:
            if s.status == StepStatus.IN_PROGRESS:
                return s
        for s in self.steps:
            if s.status == StepStatus.PENDING:
                return s
        return None

    def step(self, step_id: str) -> StepReport | None:
        return next((s for s in self.steps if s.id == step_id), None)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlanReport:
        """The report back from `to_json` (a `plan_report` event's payload): what the views
        render. The counts are recomputed from the steps, never trusted apart from them."""
        steps = [
            StepReport.model_validate({**s, "order": i})
            for i, s in enumerate(data.get("steps") or [])
        ]
        return cls(
            steps=steps,
            revision=int(data.get("revision") or 0),
            source=data.get("source"),
            history=[PlanRevision.model_validate(h) for h in data.get("history") or []],
        )

    def to_json(self) -> dict[str, Any]:
        cur = self.current
        return {
            "revision": self.revision,
            "source": self.source,
            "steps": [s.to_json() for s in self.steps],
            "total": self.total,
            "done_count": self.done_count,
            "changed_count": self.changed_count,
            "missing_count": self.missing_count,
            "current": cur.id if cur is not None else None,
            "history": [h.model_dump() for h in self.history],
        }
