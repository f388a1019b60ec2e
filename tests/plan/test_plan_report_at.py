"""build_report_at: the event report reconciled with the files on disk."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cerveau_tui.plan.models import StepStatus
from cerveau_tui.plan.report import build_report, build_report_at
from cerveau_tui.workspace.fingerprint.digest import hash_bytes
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

if TYPE_CHECKING:
    from conftest import Session

PARSER = {"id": "1", "title": "parser", "files": ["src/parser.py"]}
CLI = {"id": "2", "title": "cli", "files": ["src/cli.py", "tests/test_cli.py"]}


def _write(ws: Path, rel: str, text: str) -> str:
    p = ws / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return hash_bytes(text.encode())


def _status(session: Session, ws: Path, step_id: str) -> StepStatus:
    step = build_report_at(session.events, ws).step(step_id)
    assert step is not None
    return step.status


def test_guard_denied_step_with_its_files_on_disk_is_done_unconfirmed(
    session: Session, tmp_path: Path
) -> None:
    # The step was worked on, the files were written, then a guard ended the turn before
    # update_plan(done): no completion event, but the work is plainly there.
    session.commit(PARSER, CLI)
    session.update("2", "in_progress")
    _write(tmp_path, "src/cli.py", "cli")
    _write(tmp_path, "tests/test_cli.py", "test")
    session.wrote("src/cli.py")
    session.wrote("tests/test_cli.py")
    session.bus.emit("guard_tripped", {"guard": "stall", "reason": "no progress", "iteration": 8})
    assert build_report(session.events).step("2").status == StepStatus.IN_PROGRESS  # type: ignore[union-attr]
    report = build_report_at(session.events, tmp_path)
    step = report.step("2")
    assert step is not None and step.status == StepStatus.DONE_UNCONFIRMED
    assert any("no completion event" in e for e in step.evidence)
    assert report.done_count == 1


def test_a_step_with_only_some_files_written_stays_pending(
    session: Session, tmp_path: Path
) -> None:
    session.commit(PARSER, CLI)
    _write(tmp_path, "src/cli.py", "cli")
    session.wrote("src/cli.py")
    assert _status(session, tmp_path, "2") == StepStatus.PENDING


def test_files_that_existed_before_and_were_not_written_are_not_evidence(
    session: Session, tmp_path: Path
) -> None:
    _write(tmp_path, "src/parser.py", "from before the session")
    session.commit(PARSER)
    assert _status(session, tmp_path, "1") == StepStatus.PENDING


def test_a_write_that_failed_is_not_evidence(session: Session, tmp_path: Path) -> None:
    _write(tmp_path, "src/parser.py", "old")
    session.commit(PARSER)
    session.wrote("src/parser.py", ok=False)
    assert _status(session, tmp_path, "1") == StepStatus.PENDING


def test_a_written_file_deleted_again_is_not_done(session: Session, tmp_path: Path) -> None:
    session.commit(PARSER)
    _write(tmp_path, "src/parser.py", "x")
    session.wrote("src/parser.py")
    (tmp_path / "src" / "parser.py").unlink()
    assert _status(session, tmp_path, "1") == StepStatus.PENDING


def test_an_earlier_steps_writes_to_a_shared_file_do_not_finish_a_later_step(
    session: Session, tmp_path: Path
) -> None:
    session.commit(PARSER, {"id": "2", "title": "error handling", "files": ["src/parser.py"]})
    digest = _write(tmp_path, "src/parser.py", "v1")
    session.wrote("src/parser.py")
    session.checkpoint("1", {"src/parser.py": digest})
    assert _status(session, tmp_path, "2") == StepStatus.PENDING
    _write(tmp_path, "src/parser.py", "v2 with errors handled")
    session.wrote("src/parser.py")
    assert _status(session, tmp_path, "2") == StepStatus.DONE_UNCONFIRMED


def test_a_checkpointed_file_that_changed_shows_changed(session: Session, tmp_path: Path) -> None:
    session.commit(PARSER)
    digest = _write(tmp_path, "src/parser.py", "v1")
    session.checkpoint("1", {"src/parser.py": digest})
    assert _status(session, tmp_path, "1") == StepStatus.DONE
    _write(tmp_path, "src/parser.py", "v2")
    report = build_report_at(session.events, tmp_path)
    assert report.steps[0].status == StepStatus.CHANGED and report.changed_count == 1
    assert "src/parser.py: changed since checkpoint" in report.steps[0].evidence


def test_a_checkpointed_file_that_was_deleted_shows_missing(
    session: Session, tmp_path: Path
) -> None:
    session.commit(CLI)
    d1 = _write(tmp_path, "src/cli.py", "cli")
    d2 = _write(tmp_path, "tests/test_cli.py", "t")
    session.checkpoint("2", {"src/cli.py": d1, "tests/test_cli.py": d2})
    (tmp_path / "tests" / "test_cli.py").unlink()
    _write(tmp_path, "src/cli.py", "edited too")
    step = build_report_at(session.events, tmp_path).steps[0]
    assert step.status == StepStatus.MISSING  # the stronger claim wins over "changed"


def test_a_file_absent_at_checkpoint_that_appears_later_is_a_change(
    session: Session, tmp_path: Path
) -> None:
    session.commit({"id": "1", "title": "remove legacy", "files": ["legacy.py"]})
    session.checkpoint("1", {"legacy.py": None})
    assert _status(session, tmp_path, "1") == StepStatus.DONE
    _write(tmp_path, "legacy.py", "back")
    assert _status(session, tmp_path, "1") == StepStatus.CHANGED


def test_recommitted_plan_keeps_a_done_step_and_checks_its_files(
    session: Session, tmp_path: Path
) -> None:
    session.commit(PARSER)
    digest = _write(tmp_path, "src/parser.py", "v1")
    session.checkpoint("1", {"src/parser.py": digest})
    session.commit(PARSER, CLI)
    report = build_report_at(session.events, tmp_path)
    assert report.revision == 2
    assert [str(s.status) for s in report.steps] == ["done", "pending"]


def test_steps_out_of_order_each_reconciled_on_its_own(session: Session, tmp_path: Path) -> None:
    session.commit(PARSER, CLI, {"id": "3", "title": "docs", "files": ["README.md"]})
    readme = _write(tmp_path, "README.md", "docs")
    session.checkpoint("3", {"README.md": readme})
    _write(tmp_path, "src/parser.py", "p")
    session.wrote("src/parser.py")
    report = build_report_at(session.events, tmp_path)
    assert [(s.id, str(s.status)) for s in report.steps] == [
        ("1", "done_unconfirmed"),
        ("2", "pending"),
        ("3", "done"),
    ]
    assert report.current is not None and report.current.id == "2"


def test_an_empty_plan_reports_nothing(session: Session, tmp_path: Path) -> None:
    session.commit()
    report = build_report_at(session.events, tmp_path)
    assert report.total == 0 and report.current is None


def test_a_directory_declared_is_satisfied_by_a_write_under_it(
    session: Session, tmp_path: Path
) -> None:
    session.commit({"id": "1", "title": "docs", "files": ["docs/"]})
    _write(tmp_path, "docs/index.md", "x")
    session.wrote("docs/index.md")
    assert _status(session, tmp_path, "1") == StepStatus.DONE_UNCONFIRMED


def test_a_warm_fingerprinter_gives_the_same_report(session: Session, tmp_path: Path) -> None:
    session.commit(PARSER)
    digest = _write(tmp_path, "src/parser.py", "v1")
    session.checkpoint("1", {"src/parser.py": digest})
    fp = Fingerprinter(tmp_path)
    fp.scan()
    first = build_report_at(session.events, tmp_path, fp)
    _write(tmp_path, "src/parser.py", "v2!")
    assert first.steps[0].status == StepStatus.DONE
    assert build_report_at(session.events, tmp_path, fp).steps[0].status == StepStatus.CHANGED
