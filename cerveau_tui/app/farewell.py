"""The last line on the terminal after the app quits: how to come back to this session.

Found (issue 33): quitting printed nothing, and a person who closed a session with work in it had
to find `--continue` in the help. Said only for a session that holds something to continue (a
message of the person's), with the exact session too: `--continue` takes the workspace's most
recent session, which another cerveau started later would be.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from ..history import Origin
from ..text_safety import visible

#: What the person put in the conversation: a harness note or a reminder alone is not a session.
SAID = (Origin.PERSON, Origin.STEER, Origin.SHELL)


def continue_line(session: Any, cwd: Path) -> str | None:
    """`cerveau --continue` (and `--resume ID`) for this session, `-w` when it was started for
    another folder; None with no stored log or nothing the person said."""
    log = getattr(session, "log", None) if session is not None else None
    if log is None:
        return None
    history = session.engine.loop_state.history  # a History: its typed messages, not wire
    if not any(m.origin in SAID for m in history.messages):
        return None
    workspace = Path(session.settings.workspace)
    where = "" if workspace.resolve() == cwd.resolve() else f" -w {shlex.quote(str(workspace))}"
    # The folder's name is the person's, but printed raw it could carry terminal controls.
    return visible(
        f"cerveau: to continue this session: cerveau{where} --continue "
        f"(or cerveau{where} --resume {log.session_id})"
    )


def say_how_to_continue(session: Any) -> None:
    """Printed after the app left the terminal (the screen it drew is gone by then)."""
    line = continue_line(session, Path.cwd())
    if line is not None:
        print(line)
