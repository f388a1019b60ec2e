"""Whether a check could run at all: "No module named pytest" and "command not found" are not a
red suite, they are no suite.

Issue 33: as an ordinary user whose python had no pytest, the detected check "ran" every turn as
"unmet, 0 errors"; nothing said why, and `doctor` called it in use. A check that cannot start is
unavailable with its cause, before it is offered (the proof, `prove`) and when it runs (the
gate's `check` reads the same outcome).
"""

from __future__ import annotations

import re
import shlex

from .base import RunCommand

#: What the proof may take: an import, not a suite.
PROOF_TIMEOUT_S = 20.0

# `python -m X` for a missing X: `/usr/bin/python3: No module named pytest` (one line, exit 1).
_NO_MODULE_M = re.compile(r"^\S*python[0-9.]*: No module named (\S+)$")
# `python -c 'import X'`: the traceback's last line.
_NO_MODULE = re.compile(r"^ModuleNotFoundError: No module named '?([\w.]+)'?$")
_NOT_FOUND = re.compile(r"(\S+): (?:command )?not found$|^(\S+): No such file or directory$")


def _module_of(command: str) -> str | None:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) >= 3 and words[1] == "-m":
        return words[2]
    return None


def cannot_run(command: str, code: int | None, output: str) -> str | None:
    """Why `command` did not run at all ("No module named pytest", "pytest: command not found"),
    or None when it ran (passing or failing). Only the runner's own module missing counts: a
    test that fails on an ImportError of the project's code ran, and failed."""
    if code is None or code == 0:
        return None
    lines = [x.strip() for x in (output or "").splitlines() if x.strip()]
    if code == 127:
        for line in lines:
            m = _NOT_FOUND.search(line)
            if m:
                return f"{m.group(1) or m.group(2)}: command not found"
        return f"{command.split()[0] if command.split() else command}: command not found"
    module = _module_of(command)
    for line in lines[:5]:
        m = _NO_MODULE_M.match(line)
        if m and module is not None and m.group(1) == module:
            return f"No module named {module}"
    return None


def prove(proof: str | None, run: RunCommand) -> str | None:
    """Run the adapter's proof command (through the runner the check will use: the sandbox, so
    the interpreter proved is the one the check gets); the cause when it shows the check cannot
    run, None when it can or there is nothing to prove. A proof that cannot start says so."""
    if not proof:
        return None
    try:
        code, output = run(proof, PROOF_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - a runner that cannot start it proves nothing
        return f"could not be tried: {exc}"
    if code == 0 or code is None:  # a slow import is not a missing one
        return None
    lines = [x.strip() for x in (output or "").splitlines() if x.strip()]
    for line in reversed(lines):
        m = _NO_MODULE.match(line) or _NO_MODULE_M.match(line)
        if m:
            return f"No module named {m.group(1)}"
    found = cannot_run(proof, code, output)
    if found:
        return found
    # Only what the proof itself said: the harness refusing the workspace ("cerveau: ...", 126)
    # says nothing about the interpreter, and a claim made from it would be a guess.
    last = lines[-1] if lines else ""
    return last[:200] if re.match(r"^[\w.]*(Error|Exception)\b", last) else None
