"""check, progressed, verification_of, and the protected-path match."""

from __future__ import annotations

import sys
from pathlib import Path

from cerveau_tui.done.criteria import (
    Criterion,
    CriterionState,
    DoneSet,
    Report,
    Verification,
    check,
    done_set_from_config,
    is_stale,
    progressed,
    verification_of,
)
from cerveau_tui.done.sandboxed import run_in_sandbox
from cerveau_tui.sandbox.none import NoSandbox


def real_runner(ws: Path):
    return run_in_sandbox(NoSandbox(), ws)


def test_a_criterion_whose_command_exits_as_expected_is_met(tmp_path: Path) -> None:
    done = DoneSet((Criterion("ok", "exit 0"), Criterion("three", "exit 3", exit_code=3)))
    report = check(done, real_runner(tmp_path))
    assert report.states == {"ok": CriterionState.MET, "three": CriterionState.MET}


def test_a_criterion_whose_command_fails_is_unmet_and_keeps_its_output(tmp_path: Path) -> None:
    done = DoneSet((Criterion("tests", "echo boom; exit 1"),))
    report = check(done, real_runner(tmp_path))
    assert report.unmet() == ["tests"]
    assert "boom" in report.outputs["tests"]


def test_a_criterion_with_nothing_to_run_is_unavailable_not_unmet(tmp_path: Path) -> None:
    done = DoneSet((Criterion("docs", ""), Criterion("blank", "   ")))
    report = check(done, real_runner(tmp_path))
    assert report.names(CriterionState.UNAVAILABLE) == ["blank", "docs"]
    assert report.unmet() == []
    assert not report.all_met


def test_a_criterion_that_times_out_is_unmet(tmp_path: Path) -> None:
    done = DoneSet((Criterion("hang", "sleep 5", timeout_s=0.3),))
    report = check(done, real_runner(tmp_path))
    assert report.unmet() == ["hang"]
    assert "timed out" in report.outputs["hang"]


def test_the_check_timeout_caps_every_criterion(tmp_path: Path) -> None:
    seen: list[float] = []

    def run(command: str, timeout: float) -> tuple[int | None, str]:
        seen.append(timeout)
        return 0, ""

    check(
        DoneSet((Criterion("a", "true", timeout_s=300), Criterion("b", "true", timeout_s=5))),
        run,
        10,
    )
    assert seen == [10, 5]


def test_a_criterion_that_cannot_be_started_is_unavailable_never_passed() -> None:
    def run(command: str, timeout: float) -> tuple[int | None, str]:
        raise PermissionError("sandbox refused")

    report = check(DoneSet((Criterion("tests", "pytest"),)), run)
    assert report.states["tests"] == CriterionState.UNAVAILABLE
    assert "sandbox refused" in report.outputs["tests"]


def test_a_real_pytest_gate_reports_a_failing_suite_as_unmet(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test_x():\n    assert 1 == 2\n")
    done = DoneSet((Criterion("tests", f"{sys.executable} -m pytest -q -p no:cacheprovider"),))
    report = check(done, real_runner(tmp_path))
    assert report.unmet() == ["tests"]
    assert "FAILED test_x.py::test_x" in report.outputs["tests"]


def test_unmet_is_sorted_whatever_the_order_of_the_criteria() -> None:
    report = Report(
        {"zeta": CriterionState.UNMET, "alpha": CriterionState.UNMET, "mid": CriterionState.MET}
    )
    assert report.unmet() == ["alpha", "zeta"]


def test_the_report_for_a_person_names_unmet_met_unavailable_and_protected() -> None:
    report = Report(
        {
            "tests": CriterionState.UNMET,
            "lint": CriterionState.MET,
            "docs": CriterionState.UNAVAILABLE,
        },
        touched_protected=["tests/test_a.py"],
    )
    text = str(report)
    assert "1 of 3 criteria unmet" in text
    assert (
        "unmet: tests" in text and "met: lint" in text and "unavailable (not checked): docs" in text
    )
    assert "tests/test_a.py" in text


def test_protected_paths_are_matched_with_the_product_glob_dialect() -> None:
    done = DoneSet(protected=("tests/**", "*.snap"))
    written = ["src/a.py", "tests/test_a.py", "tests/deep/x.py", "ui/view.snap"]
    assert done.touched_protected(written) == ["tests/deep/x.py", "tests/test_a.py", "ui/view.snap"]


def test_a_done_set_is_built_from_the_config_section() -> None:
    from cerveau_tui.config import DoneConfig

    cfg = DoneConfig.model_validate(
        {
            "protected": ["tests/**"],
            "criteria": [{"name": "tests", "command": "python3 -m pytest -q"}],
        }
    )
    done = done_set_from_config(cfg.criteria, cfg.protected)
    assert done.criteria == (Criterion("tests", "python3 -m pytest -q", 0, 300.0),)
    assert done.protected == ("tests/**",)


# --- progressed ---------------------------------------------------------------------------------


def test_progress_is_strict_shrinkage_of_the_unmet_set() -> None:
    assert progressed(["lint", "tests"], ["tests"])
    assert progressed(["tests"], [])


def test_the_same_unmet_set_is_not_progress() -> None:
    assert not progressed(["tests"], ["tests"])


def test_a_growing_unmet_set_is_a_regression_not_progress() -> None:
    assert not progressed(["tests"], ["lint", "tests"])


def test_swapping_one_failure_for_another_is_not_progress() -> None:
    assert not progressed(["lint", "tests"], ["tests", "build"])
    assert not progressed(["a"], ["b"])


# --- the verification seal ---------------------------------------------------------------------


def _report(**states: str) -> Report:
    return Report({k: CriterionState(v) for k, v in states.items()})


def test_nothing_changed_is_clean_whatever_the_report() -> None:
    assert verification_of(_report(tests="unmet"), changed=False, stale=True) == Verification.CLEAN


def test_a_met_check_after_the_last_write_is_passed() -> None:
    assert verification_of(_report(tests="met"), changed=True, stale=False) == Verification.PASSED


def test_an_unmet_check_after_the_last_write_is_failed() -> None:
    assert (
        verification_of(_report(tests="unmet", lint="met"), changed=True, stale=False)
        == Verification.FAILED
    )


def test_a_write_after_a_passing_check_makes_it_stale() -> None:
    assert verification_of(_report(tests="met"), changed=True, stale=True) == Verification.STALE


def test_a_change_with_no_command_known_is_unavailable() -> None:
    assert verification_of(None, changed=True, stale=False) == Verification.UNAVAILABLE
    assert (
        verification_of(_report(docs="unavailable"), changed=True, stale=True)
        == Verification.UNAVAILABLE
    )


def test_staleness_compares_write_counts() -> None:
    assert not is_stale(checked_at_seq=4, current_seq=4)
    assert is_stale(checked_at_seq=4, current_seq=5)
    assert is_stale(checked_at_seq=None, current_seq=1)
    assert not is_stale(checked_at_seq=None, current_seq=0)
