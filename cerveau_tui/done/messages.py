"""What the gate tells the model, and the facts it picks for it (pure).

Apart from the hook so the wording can be read and tested without running a turn: these strings
are the whole interface between the gate and a small model, and a vague one costs a cycle.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..redact import mask_secrets
from ..workspace.io.openat import read_bytes_beneath
from .criteria import DoneSet, Report
from .gate import Decision

#: A frame of a traceback: pytest's `calc.py:3: in add` and Python's `File "calc.py", line 3`.
_FILE_REF = re.compile(r'([\w./-]+\.\w+):\d+|File "([^"]+)", line \d+')
#: A test file larger than this is not parsed for its imports.
MAX_TEST_BYTES = 256_000


def reenter_message(report: Report, decision: Decision, max_stall: int, notes: list[str]) -> str:
    if decision.progress:
        head = f"Progress ({decision.why}), but the done criteria are not all met yet. Keep going."
    elif decision.why == "first check":
        head = "The done check ran after your answer and criteria are unmet, so the turn continues."
    else:
        head = (
            f"No progress since the best state so far ({decision.why}; cycle {decision.stall} "
            f"of {max_stall} before escalation). Change your approach."
        )
    if report.touched_protected:
        head += (
            " Note: you edited protected paths ("
            + ", ".join(report.touched_protected)
            + "); that is reported to the person and does not count as a fix."
        )
    return "\n".join([*notes, head, report.detail()])


def focus_file(
    workspace: Path, done: DoneSet, report: Report, written: Sequence[str]
) -> str | None:
    """The one file R3 narrows to: the code under test the failing output's traceback points
    into beyond the protected test file: a frame in a workspace file, else a workspace module the
    named test file imports (an assert in the test names only the test); the session's own
    writes first. None when there is no such file: the round is then read-only.

    Never a protected one: narrowing a stalled model onto the test file would point it at the
    shortest wrong way out. Never a write the failure does not lead to: the last file written was
    the fallback once, and when the failure named only the test file it narrowed the round to an
    unrelated `other.py` and refused the real fix in `calc.py` (issue 37). Never a file outside
    the workspace (a frame in the standard library or site-packages).
    """
    root = workspace.resolve()
    frames: list[str] = []
    for name in report.unmet():
        for m in _FILE_REF.finditer(report.outputs.get(name, "")):
            path = (root / (m.group(1) or m.group(2))).resolve()
            rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else ""
            if rel and rel not in frames and path.is_file():
                frames.append(rel)
    tests = done.touched_protected(frames)
    code = [rel for rel in frames if rel not in tests]
    code += [rel for t in tests for rel in _imported(root, t) if rel not in code]
    code = [rel for rel in code if not done.touched_protected([rel])]
    return next((rel for rel in code if rel in written), code[0] if code else None)


def _imported(root: Path, rel: str) -> list[str]:
    """The workspace files a test module imports (`from calc import add` -> calc.py), in order."""
    try:  # beneath the workspace, no link followed, bounded: the file is the model's to plant
        tree = ast.parse(read_bytes_beneath(root, rel, MAX_TEST_BYTES))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # unreadable, too large, not Python, or nested past the parser's depth
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    found: list[str] = []
    for module in names:
        base = module.replace(".", "/")
        for cand in (
            f"{base}.py",
            f"{base}/__init__.py",
            f"src/{base}.py",
            f"src/{base}/__init__.py",
        ):
            path = (root / cand).resolve()
            if path.is_relative_to(root) and path.is_file() and cand not in found:
                found.append(cand)
                break
    return found


def tried_calls(calls: Sequence[Any]) -> list[str]:
    """One line per call of the turn (hooks.CallRecord), for the handoff's "what was tried"."""
    return [
        f"{c.name} {c.command or ', '.join(c.wrote) or ''}".strip()
        + f" -> {'ok' if c.ok else 'failed'}"
        for c in calls
    ]


def gate_section(done: DoneSet) -> str:
    """The definition of done, as the system prompt (or a mid-session reminder) states it."""
    # A criterion from the person's own config may quote a credential (`curl -H "Authorization:
    # Bearer ..." http://user:pw@host/health`): the model needs what is checked, not the key.
    names = ", ".join(
        f"`{c.name}` ({mask_secrets(c.command) or 'no command'})" for c in done.criteria
    )
    text = (
        f"This workspace has a definition of done: {names}. When you stop calling tools the "
        "harness runs these checks; if any is unmet, you get the output and the turn goes on."
    )
    if done.protected:
        text += (
            " Protected paths (" + ", ".join(done.protected) + ") are the measurement: fix "
            "the code, not the tests. Any edit to them is reported to the person."
        )
    return text


def undecided_notice(command: str) -> str:
    return (
        f"no done gate: the detected check `{command}` is not in use until it is chosen "
        '([done] gate = "auto", or `cerveau run --gate auto`)'
    )


def cannot_run_notice(command: str, cause: str) -> str:
    """The detected check that was proved unable to run: said, never offered nor counted (issue
    33: it "ran" every turn as "unmet, 0 errors" while it was "No module named pytest")."""
    return (
        f"no done gate: the detected check `{command}` cannot run here: {cause} "
        "(install it where the check runs, or set [done] gate to a command that runs)"
    )
