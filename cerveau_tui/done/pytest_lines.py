"""The lines of pytest's output that name a failure, written once: the done check reads them as
findings (done/findings.py) and the Python adapter as error keys (adapters/python.py), and two
copies had already drifted apart. Here, in `done/`, because core never imports an adapter
(.importlinter) while an adapter may import `done`.
"""

from __future__ import annotations

import re

#: The short summary: `FAILED tests/t.py::test_a - AssertionError` / `ERROR tests/t.py`. Also
#: unittest's last line `FAILED (failures=2)`, whose "id" starts with `(`: `summary_id` is the
#: reader that wants test ids only.
SUMMARY = re.compile(r"^(FAILED|ERROR)\s+(\S+)")
#: `E` plus at least two spaces: pytest's detail line (matched before whitespace is collapsed, or
#: "E  x" could not be told from a sentence starting with "E").
E_LINE = re.compile(r"^E\s{2,}(.*\S)")
#: The last line of a traceback: `ValueError: bad`, `pkg.CustomException`, `SystemExit: 2`, and
#: for error keys also `KeyboardInterrupt` and `DeprecationWarning: ...`.
EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning))\b(:.*)?$")


def summary_id(line: str) -> str | None:
    """The test id of a short-summary line (`tests/t.py::test_a`); None for any other line."""
    m = SUMMARY.match(line)
    return m.group(2) if m is not None and not m.group(2).startswith("(") else None


def is_error_line(line: str) -> bool:
    """A traceback's last line naming an error (an Interrupt or a Warning is not one)."""
    m = EXC_LINE.match(line)
    return m is not None and m.group(2) not in ("Interrupt", "Warning")
