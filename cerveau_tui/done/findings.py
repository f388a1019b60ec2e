"""What a check found, read from its output: the failing tests by name, how many, what stopped the
suite itself (a collection error, a missing module), and the first error lines, bounded.

Issue 33: the precheck found two failing tests by name and told nobody. The person saw "running
… iter 0" and then nothing; the model's first request held the task and a reminder, and it went
looking for the test file by guessing. Here the output becomes facts both can read: the chat's
line (red as loudly as green) and the model's first reminder.

Pure text in, text out: pytest's and unittest's summaries are read; any other runner gives its
adapter's error keys (done/errors.py) and its last lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .. import protocol as P
from ..context.pack import estimate_tokens
from .criteria import CriterionState, Report
from .pytest_lines import E_LINE, is_error_line, summary_id

# pytest's last line: `2 failed, 3 passed in 0.12s`, `1 error in 0.05s`.
_PYTEST_COUNT = re.compile(r"(\d+) (failed|errors?)\b")
_COLLECTING = re.compile(r"^_+ ERROR collecting (\S+) _+$")
# unittest: `FAIL: test_a (tests.test_x.T.test_a)` and its last line `FAILED (failures=2, errors=1)`.
_UNITTEST_ID = re.compile(r"^(FAIL|ERROR): (\S+) \(([^)]+)\)")
_UNITTEST_COUNT = re.compile(r"(failures|errors)=(\d+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

#: How much of the findings the model reads in its first request: a few hundred tokens, enough
#: for the names and the first assertion, small enough to never crowd out the code it is about.
FINDINGS_TOKENS = 300
#: Failing tests named in the chat line; the rest are counted.
NAMED_IN_LINE = 5


@dataclass
class Findings:
    failing: list[str] = field(default_factory=list)  # test ids, first-seen order
    failed: int = 0  # the runner's count when it printed one, else len(failing)
    cause: str = ""  # the suite did not run as a whole: what stopped it
    first_errors: list[str] = field(default_factory=list)


def _lines(output: str) -> list[str]:
    return [_ANSI.sub("", x).rstrip() for x in (output or "").splitlines()]


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(x for x in items if x))


def _cause(lines: list[str]) -> str:
    """The one line that says why the suite could not run as a whole, if it could not."""
    for i, line in enumerate(lines):
        m = _COLLECTING.match(line.strip())
        if m:
            exc = next((x.strip() for x in lines[i + 1 :] if E_LINE.match(x)), "")
            exc = E_LINE.sub(r"\1", exc) if exc else ""
            return f"cannot collect {m.group(1)}" + (f": {exc}" if exc else "")
    for line in lines:
        s = line.strip()
        if "No module named" in s or s.startswith(("ModuleNotFoundError", "ImportError")):
            return s[:200]
        if "command not found" in s or s.endswith("No such file or directory"):
            return s[:200]
    return ""


def read_output(output: str, keys: Callable[[str], list[str]] | None = None) -> Findings:
    """The findings of one criterion's output. `keys`: the stack adapter's error lines, used when
    the output is neither pytest's nor unittest's."""
    lines = _lines(output)
    failing: list[str] = []
    counted = 0
    for line in lines:
        if test_id := summary_id(line):
            failing.append(test_id)
        elif m := _UNITTEST_ID.match(line):
            failing.append(f"{m.group(3)}")
    for line in reversed(lines):
        if " in " in line and (found := _PYTEST_COUNT.findall(line)):
            counted = sum(int(n) for n, _ in found)
            break
        if line.startswith("FAILED (") and (found := _UNITTEST_COUNT.findall(line)):
            counted = sum(int(n) for _, n in found)
            break
    failing = _unique(failing)
    errors = _unique([E_LINE.sub(r"\1", x).strip() for x in lines if E_LINE.match(x)])
    if not errors:
        errors = _unique([x.strip() for x in lines if is_error_line(x.strip())])
    if not failing and not errors and keys is not None:
        errors = _unique(keys(output))
    if not errors:
        errors = [x.strip() for x in lines if x.strip()][-6:]
    return Findings(failing, max(counted, len(failing)), _cause(lines), errors)


def findings_of(
    report: Report, keys: Callable[[str], list[str]] | None = None
) -> dict[str, Findings]:
    """The findings of every unmet criterion, by criterion name."""
    return {n: read_output(report.outputs.get(n, ""), keys) for n in report.unmet()}


def merged(found: dict[str, Findings]) -> Findings:
    out = Findings()
    for f in found.values():
        out.failing += f.failing
        out.failed += f.failed
        out.cause = out.cause or f.cause
        out.first_errors += f.first_errors
    out.failing = _unique(out.failing)
    return out


def check_state(report: Report, interrupted: bool = False) -> str:
    """One word for a check: interrupted, failed, passed, unavailable (nothing could run)."""
    if interrupted:
        return "interrupted"
    if report.unmet():
        return "failed"
    return "passed" if report.all_met else "unavailable"


def for_the_model(
    command: str, found: Findings, count: Callable[[str], int] = estimate_tokens
) -> str:
    """The precheck's red result as the model's first fact, at most FINDINGS_TOKENS by `count`:
    the names first (they are what the model would otherwise guess), then the first errors."""
    head = f"The done check `{command}` ran before you started, and it FAILS"
    if found.cause:
        head += f": the suite itself does not run ({found.cause})."
    elif found.failed:
        head += f": {found.failed} failing."
    else:
        head += "."
    parts = [head]
    if found.failing:
        parts.append("Failing tests:")
    budget = FINDINGS_TOKENS - count(head) - 40  # room for the headers and "and N more"
    shown = 0
    for name in found.failing:
        if count(name) + 2 > budget:
            break
        parts.append(f"  {name}")
        budget -= count(name) + 2
        shown += 1
    if shown < len(found.failing):
        parts.append(f"  ... and {len(found.failing) - shown} more")
    if found.first_errors and budget > 20:
        parts.append("First error lines:")
        for line in found.first_errors:
            line = line if len(line) <= 300 else line[:299] + "…"
            if count(line) + 2 > budget:
                break
            parts.append(f"  {line}")
            budget -= count(line) + 2
    return "\n".join(parts)


def names_text(found: Findings) -> str:
    """The failing tests for a person's line: the first few by name, the rest counted."""
    named = found.failing[:NAMED_IN_LINE]
    more = found.failed - len(named)
    return ", ".join(named) + (f" and {more} more" if more > 0 and named else "")


def unavailable_cause(report: Report) -> str:
    """Why a check could not run ("cannot run: No module named pytest"), from the first
    unavailable criterion's output; "" when every criterion ran."""
    for name in report.names(CriterionState.UNAVAILABLE):
        first = (report.outputs.get(name) or "").strip().splitlines()
        if first:
            return first[0][:200]
    return ""


def check_event(
    report: Report,
    errors: list[str],
    command: str,
    found: Findings,
    precheck: bool,
    reused: bool,
    stopped: bool,
    took_s: float,
) -> P.CheckPayload:
    """The `check` event: the report's states and error keys as before, and what issue 33's
    clients read (the command, one state word, the failing tests by name, red or green)."""
    idle = check_state(report, stopped) == "unavailable"  # nothing ran: say why
    return P.CheckPayload(
        precheck=precheck,
        reused=reused,
        states={k: str(v) for k, v in report.states.items()},
        unmet=report.unmet(),
        errors=len(errors),
        error_lines=errors[:20],
        touched_protected=report.touched_protected,
        command=command,
        state=check_state(report, stopped),
        failing=[] if stopped else found.failing,
        failed=0 if stopped else found.failed,
        cause="" if stopped else found.cause or (unavailable_cause(report) if idle else ""),
        took_s=round(took_s, 2),
    )
