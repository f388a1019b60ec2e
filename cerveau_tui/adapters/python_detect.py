"""What a Python project says it runs as its tests, read from its own files, as text.

Issue 33: more-itertools' tox.ini and Makefile run `python -m unittest`, whose `load_tests` hooks
also run the doctests; the detected `python3 -m pytest -q` skipped them, so a break only a doctest
saw passed the check. So the project's own word comes first, in this order: tox (tox.ini, then
pyproject's `[tool.tox]`), a nox session, a Makefile `test:` target whose recipe is one plain
command, pytest's own configuration (pyproject, setup.cfg, pytest.ini), and last the shape of the
test files (a `load_tests`, or unittest-only suites in a project that never names pytest).

Nothing here runs a project file: a noxfile is parsed (ast), never imported; a Makefile is read,
never given to make. Every file is read regular-only, non-blocking and bounded (a FIFO named
tox.ini would otherwise hang detection before the first prompt).
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..state_file import read_regular

#: A config file larger than this is not read: a planted huge file must not stall detection.
MAX_CONFIG = 256 * 1024
#: Test files read for their shape (load_tests, TestCase): a handful tells, a thousand stalls.
MAX_TEST_FILES = 40

Runner = Literal["pytest", "unittest"]

# A word a command may carry as an argument: no shell syntax, no substitution, no tox/make braces.
_PLAIN = re.compile(r"^[\w.@%+=:,/-]+$")
_PYTHON = re.compile(r"^(python[0-9.]*|\{envpython\}|\$[({]PYTHON[)}])$")
_MAKE_VAR = re.compile(r"^\$[({](\w+)[)}]$")
_SHELL = re.compile(r"[;&|<>`]|\$\(")
_PYTEST_WORD = re.compile(r"(?<![\w-])pytest(?![\w-])", re.IGNORECASE)


@dataclass(frozen=True)
class ProjectCheck:
    """The runner the project uses, the plain arguments it gives it, and where that was read."""

    runner: Runner
    args: tuple[str, ...] = ()
    source: str = ""

    def command(self, python: str) -> str:
        if self.runner == "pytest":
            # -q: the summary findings.py reads; the project's own pytest options (plugins such
            # as --cov) are left out, since they fail where the plugin is not installed.
            return f"{python} -m pytest -q"
        return " ".join([python, "-m", "unittest", *(shlex.quote(a) for a in self.args)])


def read_text(path: Path) -> str | None:
    """A regular file's text, bounded; None for anything else (missing, FIFO, link, too large)."""
    try:
        return read_regular(path, MAX_CONFIG, follow_links=False).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def parse_command(line: str, defined: frozenset[str] = frozenset()) -> ProjectCheck | None:
    """One command line as a test runner, when it is plainly one: `python -m unittest -v`,
    `{envpython} -m pytest {posargs}`, `pytest`. Anything else (a pipe, `coverage run`, an
    option before `-m`, a make variable the Makefile sets) is not guessed at: None."""
    line = line.strip().lstrip("@-").strip()
    if not line or _SHELL.search(line) or line.endswith("\\"):
        return None
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    kept: list[str] = []
    for word in words:
        if word.startswith("{posargs") or word in ("[]",):
            continue  # tox's "extra arguments": empty when the check runs
        m = _MAKE_VAR.match(word)
        if m and not _PYTHON.match(word):
            if m.group(1) in defined:
                return None  # a value set in the Makefile changes the command: not plain
            continue  # unset: make expands it to nothing
        kept.append(word)
    if not kept:
        return None
    if kept[0] in ("pytest", "py.test"):
        return ProjectCheck("pytest")
    if not _PYTHON.match(kept[0]) or len(kept) < 3 or kept[1] != "-m":
        return None
    args = tuple(kept[3:])
    if kept[2] == "pytest":
        return ProjectCheck("pytest")
    if kept[2] == "unittest" and all(_PLAIN.match(a) for a in args):
        return ProjectCheck("unittest", args)
    return None


def _first_runner(lines: list[str], source: str) -> ProjectCheck | None:
    for line in lines:
        found = parse_command(line)
        if found is not None:
            return ProjectCheck(found.runner, found.args, source)
    return None


def _ini(text: str) -> configparser.RawConfigParser | None:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _tox_ini(text: str, source: str) -> ProjectCheck | None:
    ini = _ini(text)
    if ini is None or not ini.has_option("testenv", "commands"):
        return None
    return _first_runner(ini.get("testenv", "commands").splitlines(), source)


def _pyproject(workspace: Path) -> dict[str, Any]:
    text = read_text(workspace / "pyproject.toml")
    try:
        return tomllib.loads(text) if text else {}
    except tomllib.TOMLDecodeError:
        return {}


def _tool_tox(pyproject: dict[str, Any]) -> ProjectCheck | None:
    tox = pyproject.get("tool", {}).get("tox")
    if not isinstance(tox, dict):
        return None
    legacy = tox.get("legacy_tox_ini")
    if isinstance(legacy, str):
        return _tox_ini(legacy, "pyproject.toml [tool.tox]")
    base = tox.get("env_run_base")
    commands = base.get("commands") if isinstance(base, dict) else None
    if not isinstance(commands, list):
        return None
    lines = [
        shlex.join(c)
        for c in commands
        if isinstance(c, list) and all(isinstance(w, str) for w in c)
    ]
    return _first_runner(lines, "pyproject.toml [tool.tox]")


def _nox(text: str) -> ProjectCheck | None:
    """The first `session.run("pytest", ...)`-like call inside a function decorated as a nox
    session, its arguments all string literals. Parsed, never imported."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or not any(
            "session" in ast.unparse(d) for d in fn.decorator_list
        ):
            continue
        for node in ast.walk(fn):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run"
            ):
                continue
            if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
                continue
            words = [
                a.value
                for a in node.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            found = parse_command(shlex.join(words)) if words else None
            if found is not None:
                return ProjectCheck(found.runner, found.args, "noxfile.py")
    return None


def _makefile(text: str) -> ProjectCheck | None:
    """The `test:` target's recipe, when its first command is one plain test command."""
    lines = text.splitlines()
    defined = frozenset(
        m.group(1) for x in lines if (m := re.match(r"^\s*(?:export\s+)?(\w+)\s*[:?+!]?=", x))
    )
    for i, line in enumerate(lines):
        if not re.match(r"^test\s*:(?!=)", line):
            continue
        recipe = []
        for x in lines[i + 1 :]:
            if not x.startswith("\t"):
                if x.strip() and not x.lstrip().startswith("#"):
                    break
                continue
            if x.strip() and not x.strip().startswith("#"):
                recipe.append(x)
        if not recipe:
            return None
        found = parse_command(recipe[0], defined)
        return ProjectCheck(found.runner, found.args, "Makefile") if found else None
    return None


def _declares_pytest(workspace: Path) -> bool:
    names = ["pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "noxfile.py"]
    names += [p.name for p in _listing(workspace) if p.name.startswith("requirements")]
    req = workspace / "requirements"
    names += [f"requirements/{p.name}" for p in _listing(req) if p.suffix in (".txt", ".in")]
    return any(_PYTEST_WORD.search(read_text(workspace / n) or "") for n in names)


def _listing(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if not p.is_symlink())
    except OSError:
        return []


def _suite_shape(workspace: Path, test_files: list[Path]) -> ProjectCheck | None:
    """unittest when the suite says so: a `load_tests` hook (pytest ignores it, and with it the
    doctests it adds), or only TestCase classes in a project that never names pytest."""
    texts = [t for p in test_files[:MAX_TEST_FILES] if (t := read_text(p)) is not None]
    if not texts:
        return None
    args = _discover_args(workspace)
    if any(re.search(r"^def load_tests\(", t, re.M) for t in texts):
        return ProjectCheck("unittest", args, "load_tests in the test files")
    unittest_only = all(
        re.search(r"\bunittest\b", t)
        and re.search(r"^class \w+\(.*TestCase\)", t, re.M)
        and not re.search(r"^(async )?def test", t, re.M)
        and not re.search(r"\bpytest\b", t)
        for t in texts
    )
    if unittest_only and not _declares_pytest(workspace):
        return ProjectCheck("unittest", args, "unittest TestCase suites, pytest not declared")
    return None


def _discover_args(workspace: Path) -> tuple[str, ...]:
    # `python -m unittest` discovers packages only: a tests/ folder without __init__.py is found
    # only when named as the start directory.
    tests = workspace / "tests"
    if tests.is_dir() and not (tests / "__init__.py").is_file():
        return ("discover", "-s", "tests", "-t", ".")
    return ()


def project_check(workspace: Path, test_files: list[Path]) -> ProjectCheck | None:
    """What the project says it runs, by the precedence above; None when it says nothing."""
    text = read_text(workspace / "tox.ini")
    found = _tox_ini(text, "tox.ini") if text else None
    pyproject = _pyproject(workspace)
    found = found or _tool_tox(pyproject)
    if found is None and (text := read_text(workspace / "noxfile.py")):
        found = _nox(text)
    if found is None and (text := read_text(workspace / "Makefile")):
        found = _makefile(text)
    if found is not None:
        return found
    tool = pyproject.get("tool", {})
    if isinstance(tool.get("pytest"), dict):
        return ProjectCheck("pytest", source="pyproject.toml [tool.pytest.ini_options]")
    setup_cfg = _ini(read_text(workspace / "setup.cfg") or "")
    if setup_cfg is not None and setup_cfg.has_section("tool:pytest"):
        return ProjectCheck("pytest", source="setup.cfg [tool:pytest]")
    if read_text(workspace / "pytest.ini") is not None:
        return ProjectCheck("pytest", source="pytest.ini")
    return _suite_shape(workspace, test_files)
