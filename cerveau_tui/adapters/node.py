"""The JavaScript/TypeScript stack: `npm test` or the Node test runner as the gate, the project's
own prettier/eslint as the autofixer, tsc and the test runners' output as error lines.

Nothing here downloads anything. `npx prettier` fetches prettier from the registry when the project
does not have it, which would turn a done check into a network call running code nobody chose;
so the fixers are the project's own `node_modules/.bin/` entries or nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

from ..state_file import read_regular
from .base import RunCommand, normalise, unique

#: package.json larger than this is not read (a planted multi-gigabyte file must not stall detect).
MAX_PACKAGE_JSON = 1 << 20
_JS = (".js", ".mjs", ".cjs", ".jsx")
_TS = (".ts", ".mts", ".cts", ".tsx")
_SKIP_DIRS = {"node_modules", ".git", ".cerveau", "dist", "build", "coverage"}
# npm init writes this as `scripts.test`; running it only ever fails, so it is not a check.
_NPM_STUB = re.compile(r"no test specified", re.IGNORECASE)
# What `node --test` (Node 20) finds without arguments: *.test.js, *-test.js, *_test.js, test-*.js,
# test.js, and any .js under a `test` directory (mjs/cjs too).
_TEST_FILE = re.compile(r"(^test\.|^test-|[._-]test\.)[cm]?js$")

_TSC = re.compile(
    r"^(?P<file>[^\s(][^(]*?)(?:\((?P<l>\d+),(?P<c>\d+)\)|:(?P<l2>\d+):(?P<c2>\d+))\s*[:-]\s*"
    r"error (?P<code>TS\d+):\s*(?P<msg>.*)$"
)
_TSC_GLOBAL = re.compile(r"^error (TS\d+):\s*(.*)$")
_TAP_SUBTEST = re.compile(r"^(?P<ind>\s*)# Subtest: (?P<name>.*)$")
_TAP_NOT_OK = re.compile(r"^(?P<ind>\s*)not ok \d+ - (?P<name>.*?)(?:\s+# (?:TODO|SKIP).*)?$")
_TAP_LOCATION = re.compile(r"^\s*location: '(?P<loc>.*?)(?::\d+:\d+)?'\s*$")
_TAP_SUITE_FAIL = re.compile(r"^\s*failureType: 'subtestsFailed'")
_TAP_END = re.compile(r"^\s*\.\.\.\s*$")
_TAP_DIAG_ERROR = re.compile(r"^#\s+((?:[A-Z]\w*)?Error\b.*)$")
_SPEC_FAIL = re.compile(r"^(?P<ind>\s*)✖ (?P<name>.*?)(?:\s+\([\d.]+m?s\))?$")
_SPEC_SUITE = re.compile(r"^(?P<ind>\s*)▶ (?P<name>.*)$")
_JEST_FAIL = re.compile(r"^\s*(?:FAIL\s+(\S+)|●\s+(.+))$")
# npm's own wrapping: the script header, its error trailer, the log path (with a timestamp).
_NPM_NOISE = re.compile(r"^(npm (ERR!|error|warn|notice)|> )", re.IGNORECASE)
_ERRORISH = re.compile(r"\b(error|errors|fail|failed|failure|fatal)\b", re.IGNORECASE)
_ALL_CLEAR = re.compile(r"\b(0|no)\s+(errors?|failures?|failed)\b|^[#ℹ]\s*fail\s+\d+", re.I)


class NodeAdapter:
    name = "node"

    def detect(self, workspace: Path) -> bool:
        return (workspace / "package.json").is_file()

    def is_typescript(self, workspace: Path) -> bool:
        """tsconfig.json, or a .ts file at the top or one level down (shallow: not node_modules)."""
        if (workspace / "tsconfig.json").is_file():
            return True
        return any(p.suffix in _TS and not p.name.endswith(".d.ts") for p in _shallow(workspace))

    def gate_command(self, workspace: Path) -> str | None:
        checks: list[str] = []
        if self.is_typescript(workspace) and _local_bin(workspace, "tsc"):
            checks.append("node_modules/.bin/tsc --noEmit")
        if _real_test_script(_package_json(workspace)):
            checks.append("npm test")
        elif self._has_test_files(workspace):
            checks.append("node --test")
        return " && ".join(checks) or None

    def protected_paths(self, workspace: Path) -> list[str]:
        """What measures the detected check: the test files Node's runner finds (and the usual
        jest/mocha places). Surfaced when written; a green earned by editing them is re-run
        against the originals."""
        return [
            "test/**",
            "tests/**",
            "__tests__/**",
            "**/*.test.*",
            "**/*.spec.*",
            "**/*-test.*",
            "**/*_test.*",
            "**/test-*.*",
        ]

    @staticmethod
    def _has_test_files(workspace: Path) -> bool:
        for p in _shallow(workspace):
            if p.suffix not in (".js", ".mjs", ".cjs"):
                continue
            rel = p.relative_to(workspace).parts
            if _TEST_FILE.search(p.name) or (len(rel) > 1 and rel[0] in ("test", "tests")):
                return True
        return False

    def autofix(
        self, workspace: Path, run: RunCommand, paths: list[str] | None = None
    ) -> list[str]:
        """`prettier --write` then `eslint --fix`, the project's own copies only, on the given
        JS/TS files only (as the Python adapter: never the person's whole tree). A line per tool
        that changed a file, judged by the files' bytes, not by the tools' chatter."""
        targets = [
            p
            for p in (paths or [])
            if p.endswith(_JS + _TS) and (workspace / p).is_file() and ".." not in Path(p).parts
        ]
        if not targets:
            return []
        # "./" keeps a file named "-rf.js" from being read as an option.
        quoted = " ".join(shlex.quote(f"./{p}") for p in targets)
        changed: list[str] = []
        for tool, args in (("prettier", "--write"), ("eslint", "--fix")):
            if not _local_bin(workspace, tool):
                continue
            before = _digests(workspace, targets)
            try:
                run(f"node_modules/.bin/{tool} {args} {quoted}", 120.0)
            except Exception:  # noqa: BLE001 - a fixer that cannot start fixes nothing
                continue
            moved = [p for p, d in _digests(workspace, targets).items() if before.get(p) != d]
            if moved:
                changed.append(f"{tool} {args} changed {', '.join(moved)}")
        return changed

    def error_lines(self, output: str) -> list[str]:
        """tsc diagnostics as `file: error TSxxxx: message` (no line and column: an edit above
        the error moves it without fixing it); failing tests as `file: suite > test` (no numbers,
        no durations); else the error-looking lines, without npm's own wrapping."""
        raw = [_strip(x) for x in (output or "").splitlines()]
        keys = _tsc_keys(raw) + _tap_keys(raw) + _spec_keys(raw) + _jest_keys(raw)
        if keys:
            return unique(keys)
        fallback = []
        for line in raw:
            if _NPM_NOISE.match(line.strip()):
                continue
            key = normalise(line)
            if _ERRORISH.search(key) and not _ALL_CLEAR.search(key):
                fallback.append(key)
        return unique(fallback)


# --- detection helpers ------------------------------------------------------------------------


def _shallow(workspace: Path) -> list[Path]:
    """Files at the top and one directory down, skipping dependency and build trees."""
    out: list[Path] = []
    try:
        top = sorted(workspace.iterdir())
    except OSError:
        return out
    for entry in top:
        if entry.is_symlink():
            continue
        if entry.is_file():
            out.append(entry)
        elif entry.is_dir() and entry.name not in _SKIP_DIRS and not entry.name.startswith("."):
            try:
                out += [p for p in sorted(entry.iterdir()) if p.is_file() and not p.is_symlink()]
            except OSError:
                continue
    return out


def _package_json(workspace: Path) -> dict[str, Any]:
    path = workspace / "package.json"
    try:
        # Non-blocking and regular only: a FIFO swapped in after detect() blocked read_text.
        raw = read_regular(path, MAX_PACKAGE_JSON, follow_links=False)
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _real_test_script(package: dict[str, Any]) -> bool:
    scripts = package.get("scripts")
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(test, str) and bool(test.strip()) and not _NPM_STUB.search(test)


def _local_bin(workspace: Path, tool: str) -> bool:
    return os.access(workspace / "node_modules" / ".bin" / tool, os.X_OK)


def _digests(workspace: Path, paths: list[str]) -> dict[str, str]:
    out = {}
    for p in paths:
        try:
            out[p] = hashlib.blake2b((workspace / p).read_bytes(), digest_size=16).hexdigest()
        except OSError:
            out[p] = ""
    return out


# --- error lines --------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _strip(line: str) -> str:
    return _ANSI.sub("", line).rstrip("\r\n")


def _tsc_keys(lines: list[str]) -> list[str]:
    keys = []
    for line in lines:
        s = line.strip()
        if m := _TSC.match(s):
            keys.append(f"{m['file'].strip()}: error {m['code']}: {normalise(m['msg'])}")
        elif m := _TSC_GLOBAL.match(s):
            keys.append(f"error {m[1]}: {normalise(m[2])}")
    return keys


def _tap_keys(lines: list[str]) -> list[str]:
    """TAP (Node's reporter when the output is not a terminal): one key per failing test, named
    by its file and its suites; a suite failing because a test in it did is not another error."""
    keys: list[str] = []
    subtests: list[tuple[int, str]] = []  # (indent, name) of the open `# Subtest:` lines
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := _TAP_SUBTEST.match(line):
            ind = len(m["ind"])
            subtests = [s for s in subtests if s[0] < ind] + [(ind, m["name"].strip())]
        elif m := _TAP_NOT_OK.match(line):
            ind, name = len(m["ind"]), m["name"].strip()
            where, suite, j = "", False, i + 1
            while j < len(lines) and not _TAP_END.match(lines[j]) and j - i < 200:
                if loc := _TAP_LOCATION.match(lines[j]):
                    where = os.path.basename(loc["loc"])
                suite = suite or bool(_TAP_SUITE_FAIL.match(lines[j]))
                j += 1
            parents = [n for d, n in subtests if d < ind]
            if not suite:
                keys.append(_test_key(where, [*parents, name]))
            subtests = [s for s in subtests if s[0] < ind]
        elif m := _TAP_DIAG_ERROR.match(line):
            keys.append(normalise(m[1]))
        i += 1
    return keys


def _spec_keys(lines: list[str]) -> list[str]:
    """The spec reporter (a terminal, or `--test-reporter=spec`): `✖ name (1.2ms)` lines; a suite
    opened with `▶` and closed with `✖` is its tests' failure, not another one. The summary
    section after "failing tests:" repeats the failures and is not read."""
    keys: list[str] = []
    suites: list[tuple[int, str]] = []
    for line in lines:
        if line.strip().startswith("✖ failing tests"):
            break
        if m := _SPEC_SUITE.match(line):
            ind = len(m["ind"])
            suites = [s for s in suites if s[0] < ind] + [(ind, m["name"].strip())]
        elif m := _SPEC_FAIL.match(line):
            ind, name = len(m["ind"]), m["name"].strip()
            if (ind, name) in suites:
                suites.remove((ind, name))
                continue
            keys.append(_test_key("", [n for d, n in suites if d < ind] + [name]))
    return keys


def _jest_keys(lines: list[str]) -> list[str]:
    keys = []
    for line in lines:
        if m := _JEST_FAIL.match(line):
            keys.append(f"FAIL {m[1]}" if m[1] else f"● {normalise(m[2])}")
    return keys


def _test_key(where: str, names: list[str]) -> str:
    # A file that failed to load is reported under its absolute path: its basename is the key.
    names = [os.path.basename(n) if n.startswith("/") else n for n in names]
    path = " > ".join(normalise(n) for n in names)
    if where and names and names[-1] == where:
        return f"{where}: (the file failed)"
    return f"{where}: {path}" if where else path
