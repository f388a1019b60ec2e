"""The escalation ladder: rung selection, messages, the handoff."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.done.criteria import CriterionState, Report
from cerveau_tui.done.ladder import (
    build_handoff,
    clear_handoff,
    load_handoff,
    next_rung,
    rung_max_tokens,
    steer_message,
    write_handoff,
)

REPORT = Report({"tests": CriterionState.UNMET}, outputs={"tests": "FAILED test_calc.py::test_add"})
ERRORS = [("tests: FAILED test_calc.py::test_add", 3)]


def test_the_ladder_starts_at_r1_and_climbs_one_rung_at_a_time() -> None:
    assert next_rung(None, expert_configured=True) == "R1"
    assert next_rung("R1", expert_configured=True) == "R2"
    assert next_rung("R2", expert_configured=True) == "R3"
    assert next_rung("R3", expert_configured=True) == "R4"
    assert next_rung("R4", expert_configured=True) is None


def test_without_an_expert_the_ladder_ends_after_r3() -> None:
    assert next_rung("R3", expert_configured=False) is None
    assert next_rung("R4", expert_configured=False) is None


def test_only_r2_raises_the_token_cap() -> None:
    assert rung_max_tokens("R1", 512) is None
    assert rung_max_tokens("R2", 512) == 1024
    assert rung_max_tokens("R3", 1024) is None


def test_r1_asks_for_a_diagnosis_before_any_edit() -> None:
    text = steer_message("R1", REPORT, ERRORS, None)
    assert "diagnose" in text and "Do NOT edit" in text


def test_r3_narrows_to_one_file_and_the_oldest_error() -> None:
    text = steer_message("R3", REPORT, ERRORS, "calc.py")
    assert "`calc.py`" in text
    assert "`tests: FAILED test_calc.py::test_add`" in text


def test_r4_carries_the_experts_advice() -> None:
    text = steer_message("R4", REPORT, ERRORS, None, expert_advice="subtract, do not add")
    assert "subtract, do not add" in text


def test_the_handoff_says_what_was_tried_what_is_unmet_and_where_things_stand() -> None:
    text = build_handoff(
        "fix add", REPORT, ["R1", "R2", "R3"], ERRORS, ["calc.py"], ["edit_file calc.py -> ok"]
    )
    assert "## Task\nfix add" in text
    assert "## What is unmet\n- tests" in text
    assert "escalation rungs: R1, R2, R3" in text
    assert "files written: calc.py" in text
    assert "edit_file calc.py -> ok" in text
    assert "(age 3)" in text


def test_a_written_handoff_is_loaded_back_and_cleared(tmp_path: Path) -> None:
    assert load_handoff(tmp_path) is None
    write_handoff(tmp_path, "# handoff\n")
    assert load_handoff(tmp_path) == "# handoff\n"
    assert clear_handoff(tmp_path)
    assert load_handoff(tmp_path) is None


def test_r3_with_no_file_named_says_the_round_is_read_only() -> None:
    text = steer_message("R3", REPORT, ERRORS, None)
    assert "read-only" in text and "`tests: FAILED test_calc.py::test_add`" in text
