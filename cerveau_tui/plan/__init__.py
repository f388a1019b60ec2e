"""Plans: commit_plan's structured steps, checkpoints, and the report every view renders.

The hook (plan.hook.PlanHook) and the session log (plan.persist) are imported from their modules,
so importing the models does not pull in the loop.
"""

from __future__ import annotations

from .detect import looks_like_plan_file, plan_from_markdown
from .drift import drift_for_write
from .models import PlanReport, PlanStep, StepReport, StepStatus
from .report import build_report, build_report_at, sorted_plan
from .state import PlanState

__all__ = [
    "PlanReport",
    "PlanState",
    "PlanStep",
    "StepReport",
    "StepStatus",
    "build_report",
    "build_report_at",
    "drift_for_write",
    "looks_like_plan_file",
    "plan_from_markdown",
    "sorted_plan",
]
