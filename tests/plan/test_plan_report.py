"""build_report: statuses from events alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerveau_tui.plan.models import StepReport, StepStatus
from cerveau_tui.plan.report import build_report, sorted_plan

if TYPE_CHECKING:
    from conftest import Session

A = {"id": "1", "title": "parser", "files": ["src/parser.py"]}
B = {"id": "2", "title": "cli", "files": ["src/cli.py"]}
C = {"id": "3", "title": "tests", "files": ["tests/test_parser.py"]}


def _statuses(session: Session) -> dict[str, str]:
    return {s.id: str(s.status) for s in build_report(session.events).steps}


def test_no_events_is_no_plan() -> None:
    report = build_report([])
    assert report.revision == 0 and report.steps == [] and report.current is None


def test_an_empty_plan_has_a_revision_and_no_steps(session: Session) -> None:
    session.commit()
    report = build_report(session.events)
    assert report.revision == 1 and report.total == 0 and report.done_count == 0
    assert report.to_json()["steps"] == []


def test_committed_steps_start_pending(session: Session) -> None:
    session.commit(A, B)
    assert _statuses(session) == {"1": "pending", "2": "pending"}


def test_updates_and_checkpoints_set_statuses(session: Session) -> None:
    session.commit(A, B, C)
    session.update("1", "in_progress")
    session.update("1", "done")
    session.checkpoint("1", {"src/parser.py": "ab"})
    session.update("2", "in_progress")
    report = build_report(session.events)
    assert _statuses(session) == {"1": "done", "2": "in_progress", "3": "pending"}
    assert report.done_count == 1 and report.current is not None and report.current.id == "2"


def test_steps_completed_out_of_order_keep_the_committed_order(session: Session) -> None:
    session.commit(A, B, C)
    session.update("3", "done")
    session.update("1", "in_progress")
    report = build_report(session.events)
    assert [s.id for s in report.steps] == ["1", "2", "3"]
    assert _statuses(session) == {"1": "in_progress", "2": "pending", "3": "done"}
    assert report.current is not None and report.current.id == "1"


def test_a_reopened_step_is_in_progress_again(session: Session) -> None:
    session.commit(A)
    session.checkpoint("1", {"src/parser.py": "ab"})
    session.update("1", "in_progress", note="found a bug")
    step = build_report(session.events).steps[0]
    assert step.status == StepStatus.IN_PROGRESS and step.note == "found a bug"


def test_an_update_for_an_unknown_step_is_ignored(session: Session) -> None:
    session.commit(A)
    session.update("9", "done")
    assert _statuses(session) == {"1": "pending"}


def test_recommit_keeps_history_and_progress_of_surviving_steps(session: Session) -> None:
    session.commit(A, B)
    session.checkpoint("1", {"src/parser.py": "ab"})
    session.commit(A, {"id": "2", "title": "cli with flags", "files": ["src/cli.py"]}, C)
    report = build_report(session.events)
    assert report.revision == 2
    assert [h.step_ids for h in report.history] == [["1", "2"], ["1", "2", "3"]]
    assert _statuses(session) == {"1": "done", "2": "pending", "3": "pending"}
    assert report.step("2") is not None and report.step("2").title == "cli with flags"  # type: ignore[union-attr]


def test_recommit_dropping_a_step_removes_it(session: Session) -> None:
    session.commit(A, B)
    session.commit(B)
    assert _statuses(session) == {"2": "pending"}


def test_a_reused_id_for_different_work_starts_over(session: Session) -> None:
    session.commit(A)
    session.checkpoint("1", {"src/parser.py": "ab"})
    session.commit({"id": "1", "title": "docs", "files": ["README.md"]})
    assert _statuses(session) == {"1": "pending"}


def test_missing_ids_are_filled_by_position_and_duplicates_dropped(session: Session) -> None:
    session.commit({"title": "a"}, {"title": "b"}, {"id": "2", "title": "dup"})
    report = build_report(session.events)
    assert [(s.id, s.title) for s in report.steps] == [("1", "a"), ("2", "b")]


def test_to_json_has_steps_with_id_title_status_files(session: Session) -> None:
    session.commit(A)
    data = build_report(session.events).to_json()
    assert data["steps"][0] | {} == {
        "id": "1",
        "title": "parser",
        "status": "pending",
        "files": ["src/parser.py"],
        "evidence": [],
        "note": None,
    }
    assert data["total"] == 1 and data["revision"] == 1 and data["current"] == "1"


def test_sorted_plan_is_committed_order_then_natural_id() -> None:
    steps = [
        StepReport(id="10", title="j", order=1),
        StepReport(id="2", title="b", order=1),
        StepReport(id="1", title="a", order=0),
    ]
    assert [s.id for s in sorted_plan(steps)] == ["1", "2", "10"]
    assert [s.id for s in sorted_plan(reversed(steps))] == ["1", "2", "10"]
