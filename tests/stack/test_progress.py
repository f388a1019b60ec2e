"""Reading cmake's progress and showing it without flooding a CI log."""

from __future__ import annotations

import io

import pytest

from cerveau_tui.stack.build import parse_cmake_progress
from cerveau_tui.stack.cli import ConsoleProgress


@pytest.mark.parametrize(
    ("line", "fraction"),
    [
        ("[ 47%] Building CXX object common/CMakeFiles/common.dir/arg.cpp.o", 0.47),
        ("[  3%] Building C object ggml/src/CMakeFiles/ggml-base.dir/ggml.c.o", 0.03),
        ("[100%] Built target llama-server", 1.0),
        ("  [ 12%] Linking CXX static library libggml.a", 0.12),
    ],
)
def test_cmake_percent_lines_become_fractions(line: str, fraction: float) -> None:
    assert parse_cmake_progress(line) == pytest.approx(fraction)


@pytest.mark.parametrize(
    "line",
    ["-- Configuring done", "gmake[2]: Entering directory", "warning: [47%] not at start", ""],
)
def test_other_lines_carry_no_progress(line: str) -> None:
    assert parse_cmake_progress(line) is None


def test_console_progress_prints_build_percentages_in_steps_not_every_line() -> None:
    out = io.StringIO()
    p = ConsoleProgress(out)
    p("build", 0.0, "cmake build")
    for pct in range(0, 101):
        p("build", pct / 100, f"[{pct:3d}%] x")
    lines = out.getvalue().splitlines()
    assert 10 <= len(lines) <= 25
    assert lines[-1].endswith("100%")


def test_console_progress_announces_each_new_stage() -> None:
    out = io.StringIO()
    p = ConsoleProgress(out)
    for stage in ("download-source", "extract-source", "configure"):
        p(stage, None, f"{stage} starting")
        p(stage, None, "noise from the tool")
    text = out.getvalue()
    assert all(
        f"{s}: {s} starting" in text for s in ("download-source", "extract-source", "configure")
    )
    assert "noise from the tool" not in text
