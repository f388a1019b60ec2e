"""How many dialogs a person answers over a scripted 20-call session, with the best scopes chosen.

    .venv/bin/python benchmarks/grant_scopes.py [BEFORE_COMMIT]   # default 8fdacc4 (issue 21's start)

The session (git, npm, curl to one host, writes to one folder outside the workspace) runs through
the policy of BEFORE_COMMIT (loaded from git into a side package) and through the current one.
The person answers every dialog "for this session" with the broadest scope offered (before: the
only one; now: the last of `choices`, narrowest first), and a command the sandbox refused (a
write outside the workspace that was not declared) is offered a rerun the same way. A second
session in the same workspace is counted too: before, nothing lasted; now the person answered
"always in this workspace" in the first one. Prints figures per approval policy; asserts nothing.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cerveau_tui.policy import Policy  # noqa: E402
from cerveau_tui.policy.rules_store import LastingRules  # noqa: E402
from cerveau_tui.tools.base import Declared  # noqa: E402
from cerveau_tui.tools.bash import NETWORK_HINTS  # noqa: E402

HOST = "127.0.0.1:8080"


def script(out: Path) -> list[tuple[str, str, Path | None]]:
    """(tool, command or path, the outside path a command writes without declaring it)."""
    return [
        ("bash", "git add src/a.py", None),
        ("bash", "git commit -m one", None),
        ("bash", "npm install lodash", None),
        ("bash", f"curl -s -m 3 http://{HOST}/one; true", None),
        ("write_file", f"{out}/a.txt", None),
        ("bash", "git add src/b.py", None),
        ("bash", "git commit -m two", None),
        ("bash", "npm install react", None),
        ("bash", f"curl -s http://{HOST}/two", None),
        ("write_file", f"{out}/b.txt", None),
        ("bash", f"mkdir -p {out}/e", out / "e"),
        ("bash", "npm install -D vitest", None),
        ("bash", f"curl http://{HOST}/three", None),
        ("write_file", f"{out}/sub/c.txt", None),
        ("bash", "git add -A", None),
        ("bash", "git commit -m three", None),
        ("bash", f"touch {out}/e/f", out / "e" / "f"),
        ("bash", f"curl -s http://{HOST}/four", None),
        ("write_file", f"{out}/d.txt", None),
        ("bash", f"cp README.md {out}/README.md", out / "README.md"),
    ]


def load_before(commit: str) -> Any:
    """The policy package as it was at `commit`, importable as cerveau_tui._policy_before (its
    relative imports of the rest of the package resolve to today's modules)."""
    where = Path(tempfile.mkdtemp(prefix="policy-before-"))
    names = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "--name-only", commit, "cerveau_tui/policy/"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for name in names:
        if name.endswith(".py"):
            text = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{commit}:{name}"],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            (where / Path(name).name).write_text(text)
    pkg = types.ModuleType("cerveau_tui._policy_before")
    pkg.__path__ = [str(where)]  # type: ignore[attr-defined]
    sys.modules["cerveau_tui._policy_before"] = pkg
    import importlib

    return importlib.import_module("cerveau_tui._policy_before.policy").Policy


def declared(ws: Path, tool: str, arg: str) -> Declared:
    if tool == "bash":
        network = any(h in f" {arg}" for h in NETWORK_HINTS)
        return Declared(reads=[ws], writes=[ws], command=arg, network=network)
    return Declared(writes=[Path(arg)])


def best(verdict: Any) -> Any:
    choices = getattr(verdict, "choices", ())
    return verdict.choose(choices[-1][0]) if choices else verdict


def session(policy: Any, ws: Path, out: Path, always: bool) -> int:
    dialogs = 0
    for tool, arg, hidden in script(out):
        d = declared(ws, tool, arg)
        v = policy.evaluate(tool, d)
        room = v.grant
        if v.action == "ask":
            dialogs += 1
            chosen = best(v)
            if always and hasattr(policy, "keep_rule"):
                policy.keep_rule(chosen, "allow")
            else:
                policy.grant_session(chosen)
        elif v.action == "deny":
            continue
        writable = room.extra_writable if room is not None else ()
        if hidden is not None and not any(hidden == w or w in hidden.parents for w in writable):
            msg = f"{arg.split()[0]}: cannot create '{hidden}': Read-only file system"
            retry = policy.after_failure(tool, d, 1, msg)
            if retry is not None and retry.action == "ask":
                dialogs += 1
                chosen = best(retry)
                if always and hasattr(policy, "keep_rule"):
                    policy.keep_rule(chosen, "allow")
                else:
                    policy.grant_session(chosen)
    return dialogs


def run(make: Any, approval: str, lasting: bool) -> tuple[int, int]:
    base = Path(tempfile.mkdtemp(prefix="grant-bench-", dir="/var/tmp"))
    ws, out = base / "ws", base / "out"
    (ws / "src").mkdir(parents=True)
    out.mkdir()
    store, key = base / "cfg" / "workspace-rules.json", secrets.token_bytes(32)

    def policy() -> Any:
        kw = {"lasting": LastingRules(ws, store, key)} if lasting else {}
        return make(ws, "workspace-write", approval, [], lambda: False, True, **kw)

    first = session(policy(), ws, out, always=lasting)
    second = session(policy(), ws, out, always=lasting)
    return first, second


def main() -> None:
    commit = sys.argv[1] if len(sys.argv) > 1 else "8fdacc4"
    before = load_before(commit)
    print(
        f"scripted session: {len(script(Path('/x')))} calls (git, npm, curl to {HOST}, writes to one outside folder)"
    )
    for approval in ("untrusted", "on-request", "on-failure"):
        b1, b2 = run(before, approval, lasting=False)
        a1, _ = run(Policy, approval, lasting=False)
        l1, l2 = run(Policy, approval, lasting=True)
        print(
            f"{approval:10}  dialogs before ({commit}): {b1:2} (next session {b2:2})   "
            f"after: {a1:2} with session grants; with 'always': {l1:2} (next session {l2:2})"
        )
    os.environ.pop("UNUSED", None)


if __name__ == "__main__":
    main()
