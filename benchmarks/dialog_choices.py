"""How many dialogs a person answers over the scripted 20-call session (grant_scopes.py's: git,
npm, curl to one host, writes to one folder outside the workspace), by how they answer:

- once: `y` to every dialog (nothing is granted);
- the default scope: `a` on the scope the dialog preselects, never choosing another (what the
  dialog offered before the scopes were selectable);
- the best scope chosen: at each dialog, the NARROWEST of its choices (1-5) after which the rest
  of the session asks no more than with the broadest; the scopes chosen are printed.

    .venv/bin/python benchmarks/dialog_choices.py

Runs the current policy (no server, no sandbox: the refused rerun of a command that writes
outside undeclared is simulated as in grant_scopes.py). Prints figures; asserts nothing.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from grant_scopes import declared, script  # noqa: E402

from cerveau_tui.policy import Policy  # noqa: E402

OUT = re.compile(r"/var/tmp/dialog-choices-[^/]+/out")

#: (dialog index, verdict) -> the verdict with the scope granted for the session, or None (once).
Answer = Callable[[int, Any], Any]


def session(answer: Answer, approval: str) -> tuple[int, list[str]]:
    base = Path(tempfile.mkdtemp(prefix="dialog-choices-", dir="/var/tmp"))
    ws, out = base / "ws", base / "out"
    (ws / "src").mkdir(parents=True)
    out.mkdir()
    policy = Policy(ws, "workspace-write", approval, [], lambda: False, True)
    dialogs, granted = 0, []

    def ask(v: Any) -> Any:
        nonlocal dialogs
        dialogs += 1
        chosen = answer(dialogs - 1, v)
        if chosen is not None:
            policy.grant_session(chosen)
            granted.append(chosen.scope)
        return chosen if chosen is not None else v

    try:
        _run(policy, ws, out, ask)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return dialogs, granted


def _run(policy: Any, ws: Path, out: Path, ask: Callable[[Any], Any]) -> None:
    for tool, arg, hidden in script(out):
        d = declared(ws, tool, arg)
        v = policy.evaluate(tool, d)
        room = v.grant
        if v.action == "ask":
            room = ask(v).grant
        elif v.action == "deny":
            continue
        writable = room.extra_writable if room is not None else ()
        if hidden is not None and not any(hidden == w or w in hidden.parents for w in writable):
            msg = f"{arg.split()[0]}: cannot create '{hidden}': Read-only file system"
            retry = policy.after_failure(tool, d, 1, msg)
            if retry is not None and retry.action == "ask":
                ask(retry)


def broadest(_: int, v: Any) -> Any:
    return v.choose(v.choices[-1][0]) if v.choices else v


def best(approval: str) -> tuple[int, list[str]]:
    """Chosen one dialog at a time: the narrowest choice whose session (the rest answered with
    the broadest) asks no more than the broadest would."""
    picks: list[int] = []

    def replay(i: int, v: Any) -> Any:
        if i < len(picks):
            return v.choose(v.choices[picks[i]][0]) if v.choices else v
        return broadest(i, v)

    floor, _ = session(replay, approval)
    while True:
        n, _ = session(replay, approval)
        if len(picks) >= n:
            return session(replay, approval)
        options = _choices_at(len(picks), replay, approval)
        for k in range(options):
            picks.append(k)
            if session(replay, approval)[0] <= floor:
                break
            picks.pop()
        else:
            picks.append(max(options - 1, 0))


def _choices_at(index: int, answer: Answer, approval: str) -> int:
    seen: list[int] = []

    def spy(i: int, v: Any) -> Any:
        if i == index:
            seen.append(len(v.choices))
        return answer(i, v)

    session(spy, approval)
    return seen[0] if seen else 1


def main() -> None:
    print(f"scripted session: {len(script(Path('/x')))} calls; dialogs the person answers:")
    for approval in ("untrusted", "on-request", "on-failure"):
        once, _ = session(lambda i, v: None, approval)
        default, _ = session(lambda i, v: v, approval)
        chosen, scopes = best(approval)
        print(
            f"  {approval:10}  once only: {once:2}   the default scope only: {default:2}   "
            f"the best scope chosen: {chosen:2}"
        )
        for scope in scopes:
            print(f"      chose: {OUT.sub('OUT', scope)}")


if __name__ == "__main__":
    main()
