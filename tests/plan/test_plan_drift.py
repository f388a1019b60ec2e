from __future__ import annotations

from typing import TYPE_CHECKING

from cerveau_tui.plan.drift import drift_for_write
from cerveau_tui.plan.report import build_report

if TYPE_CHECKING:
    from conftest import Session

STEPS = (
    {"id": "1", "title": "parser", "files": ["src/parser.py"]},
    {"id": "2", "title": "tests", "files": ["tests/"]},
)


def test_a_write_outside_declared_files_names_the_current_step(session: Session) -> None:
    session.commit(*STEPS)
    session.update("1", "in_progress")
    msg = drift_for_write(build_report(session.events), "src/other.py")
    assert msg is not None and "src/other.py" in msg and "step 1 (parser)" in msg


def test_declared_files_and_directories_are_not_drift(session: Session) -> None:
    session.commit(*STEPS)
    report = build_report(session.events)
    assert drift_for_write(report, "src/parser.py") is None
    assert drift_for_write(report, "./src/parser.py") is None
    assert drift_for_write(report, "tests/test_parser.py") is None


def test_no_plan_means_no_drift(session: Session) -> None:
    assert drift_for_write(build_report(session.events), "anything.py") is None
    session.commit({"id": "1", "title": "explore"})
    assert drift_for_write(build_report(session.events), "anything.py") is None


def test_the_plan_file_and_the_harness_folder_are_not_drift(session: Session) -> None:
    session.commit(*STEPS, source="file", path="PLAN.md")
    report = build_report(session.events)
    assert drift_for_write(report, "PLAN.md") is None
    assert drift_for_write(report, ".cerveau/sessions/x.jsonl") is None
