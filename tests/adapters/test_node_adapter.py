"""The Node adapter: what it detects, which check it proposes, what it fixes with, and the error
keys it reads from tsc, `node --test` and `npm test` output."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from cerveau_tui.adapters.node import NodeAdapter

NPM_STUB = 'echo "Error: no test specified" && exit 1'

# Real output of Node 20's TAP reporter (two runs differ only in durations and numbering order).
TAP = """TAP version 13
# Subtest: adds
not ok 1 - adds
  ---
  duration_ms: {d1}
  location: '/ws/test/a.test.js:4:1'
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:

    -1 !== 3

  code: 'ERR_ASSERTION'
  ...
# Subtest: ok one
ok 2 - ok one
  ---
  duration_ms: 0.125439
  ...
# Subtest: suite
    # Subtest: inner fails
    not ok 1 - inner fails
      ---
      duration_ms: {d2}
      location: '/ws/test/a.test.js:6:37'
      failureType: 'testCodeFailure'
      error: |-
        1 !== 2
      ...
    1..1
not ok 3 - suite
  ---
  duration_ms: 0.367732
  type: 'suite'
  location: '/ws/test/a.test.js:6:6'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  ...
1..3
# tests 3
# pass 1
# fail 2
# duration_ms {d3}
"""

SPEC = """✖ adds ({d1}ms)
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
      at TestContext.<anonymous> (/ws/test/a.test.js:4:29)
✔ ok one (0.125332ms)
▶ suite
  ✖ inner fails ({d2}ms)
    AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
✖ suite (0.379428ms)
ℹ tests 3
ℹ fail 2
ℹ duration_ms {d3}

✖ failing tests:

✖ adds ({d1}ms)
"""

TSC = """src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.
src/b.ts(10,1): error TS2304: Cannot find name 'foo'.
"""


def project(ws: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


def pkg(test: str | None = None) -> str:
    return json.dumps({"name": "p", "scripts": {"test": test} if test is not None else {}})


def local_tool(ws: Path, name: str, script: str) -> None:
    path = ws / "node_modules" / ".bin" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def shell(ws: Path, seen: list[str]):
    def run(command: str, timeout: float) -> tuple[int | None, str]:
        seen.append(command)
        p = subprocess.run(command, shell=True, cwd=ws, capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    return run


# --- detection -------------------------------------------------------------------------------


def test_a_package_json_makes_a_node_project(tmp_path: Path) -> None:
    assert NodeAdapter().detect(project(tmp_path, {"package.json": pkg()}))


def test_no_package_json_is_not_a_node_project(tmp_path: Path) -> None:
    assert not NodeAdapter().detect(project(tmp_path, {"index.js": "1\n"}))


def test_tsconfig_makes_it_typescript(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "tsconfig.json": "{}"})
    assert NodeAdapter().is_typescript(ws)


def test_a_ts_source_one_level_down_makes_it_typescript(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "src/a.ts": "export {}\n"})
    assert NodeAdapter().is_typescript(ws)


def test_plain_javascript_is_not_typescript(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "src/a.js": "1\n", "types.d.ts": ""})
    assert not NodeAdapter().is_typescript(ws)


def test_a_real_test_script_is_the_gate(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg("node --test")})
    assert NodeAdapter().gate_command(ws) == "npm test"


def test_npms_default_stub_is_not_a_check(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(NPM_STUB), "index.js": "1\n"})
    assert NodeAdapter().gate_command(ws) is None


def test_the_stub_with_test_files_falls_back_to_the_node_runner(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(NPM_STUB), "test/a.test.js": ""})
    assert NodeAdapter().gate_command(ws) == "node --test"


def test_a_test_file_at_the_top_is_found(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "math.test.mjs": ""})
    assert NodeAdapter().gate_command(ws) == "node --test"


def test_tests_inside_node_modules_do_not_count(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "node_modules/x/test.js": ""})
    assert NodeAdapter().gate_command(ws) is None


def test_a_broken_package_json_has_no_script(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": "{not json", "test/a.test.js": ""})
    assert NodeAdapter().gate_command(ws) == "node --test"


def test_typescript_with_a_local_tsc_checks_types_first(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg("node --test"), "tsconfig.json": "{}"})
    local_tool(ws, "tsc", "exit 0\n")
    assert NodeAdapter().gate_command(ws) == "node_modules/.bin/tsc --noEmit && npm test"


def test_typescript_without_a_local_tsc_does_not_fetch_one(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg("node --test"), "tsconfig.json": "{}"})
    assert NodeAdapter().gate_command(ws) == "npm test"


# --- error lines -------------------------------------------------------------------------------


def test_tsc_diagnostics_are_keyed_without_line_and_column() -> None:
    assert NodeAdapter().error_lines(TSC) == [
        "src/a.ts: error TS2322: Type 'string' is not assignable to type 'number'.",
        "src/b.ts: error TS2304: Cannot find name 'foo'.",
    ]


def test_tsc_pretty_output_gives_the_same_keys() -> None:
    pretty = "\x1b[96msrc/a.ts\x1b[0m:5:2 - \x1b[91merror\x1b[0m TS2322: Type 'string' is not assignable to type 'number'.\n"
    assert NodeAdapter().error_lines(pretty) == [
        "src/a.ts: error TS2322: Type 'string' is not assignable to type 'number'."
    ]


def test_node_tap_failures_are_one_key_per_failing_test() -> None:
    keys = NodeAdapter().error_lines(TAP.format(d1="1.6", d2="0.18", d3="89.8"))
    assert keys == ["a.test.js: adds", "a.test.js: suite > inner fails"]


def test_node_tap_keys_are_stable_across_runs() -> None:
    a = NodeAdapter().error_lines(TAP.format(d1="1.6", d2="0.18", d3="89.8"))
    b = NodeAdapter().error_lines(TAP.format(d1="7.25", d2="3.1", d3="120.4"))
    assert a == b


def test_a_test_file_that_fails_to_load_is_keyed_by_its_name_and_error() -> None:
    out = (
        "# Error: Cannot find module './missing-mod'\n"
        "# Subtest: /ws/test/b.test.js\n"
        "not ok 2 - /ws/test/b.test.js\n"
        "  ---\n  duration_ms: 57.8\n  location: '/ws/test/b.test.js:1:1'\n"
        "  failureType: 'testCodeFailure'\n  ...\n"
    )
    assert NodeAdapter().error_lines(out) == [
        "Error: Cannot find module './missing-mod'",
        "b.test.js: (the file failed)",
    ]


def test_spec_reporter_failures_without_durations_or_the_suite() -> None:
    a = NodeAdapter().error_lines(SPEC.format(d1="1.5", d2="0.2", d3="76"))
    b = NodeAdapter().error_lines(SPEC.format(d1="9.0", d2="4.4", d3="99"))
    assert a == b == ["adds", "suite > inner fails"]


def test_npm_test_output_is_read_through_npms_wrapping() -> None:
    out = (
        "\n> p@1.0.0 test\n> node --test\n\n"
        + TAP.format(d1="1", d2="2", d3="3")
        + "npm error code 1\nnpm error A complete log of this run can be found in: "
        "/root/.npm/_logs/2026-12-01T11_45_00_000Z-debug-0.log\n"
    )
    assert NodeAdapter().error_lines(out) == ["a.test.js: adds", "a.test.js: suite > inner fails"]


def test_unknown_npm_failure_keeps_the_error_and_drops_npms_log_line() -> None:
    out = (
        "> p@1.0.0 test\n> mocha\n\nsh: 1: mocha: not found\nError: something failed\n"
        "npm ERR! Test failed.  See above for more details.\n"
        "npm error A complete log of this run can be found in: /root/.npm/_logs/2026-x.log\n"
    )
    assert NodeAdapter().error_lines(out) == ["Error: something failed"]


# --- autofix -------------------------------------------------------------------------------------


def test_autofix_without_local_tools_runs_nothing(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "a.js": "x=1\n"})
    seen: list[str] = []
    assert NodeAdapter().autofix(ws, shell(ws, seen), ["a.js"]) == []
    assert seen == []


def test_autofix_uses_the_projects_prettier_and_reports_the_changed_file(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "a.js": "x=1\n", "b.js": "y = 2;\n"})
    # A stand-in for prettier: rewrites only a.js (b.js is already "formatted").
    local_tool(ws, "prettier", 'sed -i "s/x=1/x = 1;/" ./a.js\n')
    seen: list[str] = []
    changed = NodeAdapter().autofix(ws, shell(ws, seen), ["a.js", "b.js"])
    assert changed == ["prettier --write changed a.js"]
    assert (ws / "a.js").read_text() == "x = 1;\n"
    assert seen == ["node_modules/.bin/prettier --write ./a.js ./b.js"]


def test_autofix_runs_eslint_fix_when_the_project_has_it(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "src/a.ts": "let x = 1\n"})
    local_tool(ws, "eslint", 'sed -i "s/let/const/" ./src/a.ts\n')
    changed = NodeAdapter().autofix(ws, shell(ws, []), ["src/a.ts"])
    assert changed == ["eslint --fix changed src/a.ts"]


def test_autofix_touches_only_the_given_js_files(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "a.js": "x\n", "notes.md": "x\n"})
    local_tool(ws, "prettier", "exit 0\n")
    seen: list[str] = []
    NodeAdapter().autofix(ws, shell(ws, seen), ["notes.md", "../outside.js", "gone.js"])
    assert seen == []


def test_autofix_never_names_npx(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "a.js": "x\n"})
    local_tool(ws, "prettier", "exit 0\n")
    local_tool(ws, "eslint", "exit 0\n")
    seen: list[str] = []
    NodeAdapter().autofix(ws, shell(ws, seen), ["a.js"])
    assert len(seen) == 2 and not any("npx" in c for c in seen)


def test_a_file_named_like_an_option_is_passed_as_a_path(tmp_path: Path) -> None:
    ws = project(tmp_path, {"package.json": pkg(), "-rf.js": "x\n"})
    local_tool(ws, "prettier", "exit 0\n")
    seen: list[str] = []
    NodeAdapter().autofix(ws, shell(ws, seen), ["-rf.js"])
    assert seen == ["node_modules/.bin/prettier --write ./-rf.js"]
    assert os.path.exists(ws / "-rf.js")


def test_the_test_files_are_what_the_detected_check_protects(tmp_path: Path) -> None:
    from cerveau_tui.policy.glob import glob_match

    patterns = NodeAdapter().protected_paths(tmp_path)

    def protected(path: str) -> bool:
        return any(glob_match(p, path) for p in patterns)

    assert protected("test/add.test.js") and protected("src/math.spec.ts")
    assert protected("add.test.mjs") and protected("__tests__/a.js")
    assert not protected("index.js") and not protected("src/testing.js")
