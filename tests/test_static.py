"""Lint and types as part of the suite: ruff over everything, mypy over the package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "cerveau_tui", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_mypy_is_clean_on_the_package():
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "cerveau_tui"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_ruff_format_is_applied():
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "cerveau_tui", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-4000:]


#: A file past this is telling you it holds two ideas (STYLE.md).
MAX_MODULE_LINES = 400


def test_no_module_is_longer_than_the_limit():
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / "cerveau_tui").rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
