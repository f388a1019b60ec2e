"""The house's counts (issue 35): lines, `Any`, broad excepts, getattr probes, proxies, tests
that read private attributes, files past 400 lines, duplicate pairs and `mypy --strict` errors.

    .venv/bin/python benchmarks/house.py [ROOT ...] [--mypy]

Each ROOT is a checkout (default: this one); give two (e.g. a `git worktree` of an older commit
and this one) to read them side by side. Counts are of text, so they are a direction, not a
verdict: a row is a place to look.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

PRIVATE = re.compile(r"\._[a-z][a-z_0-9]*")
BROAD = re.compile(r"except\s*(\(\s*)?(Exception|BaseException)\b|except\s*:")
ANY = re.compile(r"\bAny\b")


def _py(root: Path, sub: str) -> list[Path]:
    return sorted((root / sub).rglob("*.py"))


def _lines(files: list[Path]) -> int:
    return sum(len(f.read_text(errors="replace").splitlines()) for f in files)


def _count(files: list[Path], keep: Callable[[str], int]) -> int:
    return sum(keep(line) for f in files for line in f.read_text(errors="replace").splitlines())


def _duplicate_pairs(root: Path) -> str:
    exe = shutil.which("duplicates")
    if exe is None:
        return "n/a"
    out = subprocess.run(
        [exe, "--repo", str(root / "cerveau_tui"), "--seconds", "120"],
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    first = out.splitlines()[0] if out else ""
    m = re.search(r"(\d+) pairs?", first)
    return m.group(1) if m else ("0" if "no duplicates" in first else first[:40])


def _mypy_strict(root: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "cerveau_tui"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=1800,
    ).stdout
    m = re.search(r"Found (\d+) errors?", out)
    return m.group(1) if m else "0"


def counts(root: Path, *, mypy: bool) -> dict[str, str]:
    src, tests = _py(root, "cerveau_tui"), _py(root, "tests")
    row = {
        "source lines": _lines(src),
        "test lines": _lines(tests),
        "source files": len(src),
        "`Any` (words)": _count(src, lambda s: len(ANY.findall(s))),
        "broad except": _count(src, lambda s: bool(BROAD.search(s))),
        "getattr(": _count(src, lambda s: s.count("getattr(") - s.count("__getattr__(")),
        "__getattr__ proxies": _count(src, lambda s: "def __getattr__" in s),
        "tests reading ._private": _count(
            tests, lambda s: bool(PRIVATE.search(s.replace("__", "")))
        ),
        "files > 400 lines": sum(len(f.read_text().splitlines()) > 400 for f in src),
        "workspace/ files": len(list((root / "cerveau_tui/workspace").rglob("*.py"))),
        "session/ files": len(list((root / "cerveau_tui/session").rglob("*.py"))),
    }
    out = {k: str(v) for k, v in row.items()}
    out["duplicate pairs"] = _duplicate_pairs(root)
    if mypy:
        out["mypy --strict errors"] = _mypy_strict(root)
    return out


def main(argv: list[str]) -> None:
    mypy = "--mypy" in argv
    roots = [Path(a) for a in argv if not a.startswith("--")] or [HERE]
    table = [counts(r, mypy=mypy) for r in roots]
    width = max(len(k) for k in table[0])
    print(f"{'':{width}}  " + "  ".join(f"{r.name:>14}" for r in roots))
    for key in table[0]:
        print(f"{key:{width}}  " + "  ".join(f"{t[key]:>14}" for t in table))


if __name__ == "__main__":
    main(sys.argv[1:])
