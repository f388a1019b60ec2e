"""Property: over random sequences of tool calls and a person's decisions, no write outside the
boundary ever lands without an approval preceding it.

The executor below is the engine's contract in miniature: evaluate -> (ask -> decision) -> run with
the verdict's grant -> on-failure rerun offer. App-executed tools (write_file) write for real;
bash is run through a simulated kernel that lets a write land only where the sandbox would make it
writable (the workspace minus .git and the app config, plus the grant's paths), or anywhere when
the sandbox is not enforced. Bash sometimes declares its target and sometimes hides it (a model can
write from inside `python -c`): the invariant must hold either way.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cerveau_tui.config import RuleConfig
from cerveau_tui.policy import Policy, Verdict
from cerveau_tui.sandbox.base import Grant
from cerveau_tui.tools.base import Declared

TARGETS = [
    "src/a.py",  # inside
    "yarn.lock",  # inside, but an ask rule
    ".git/hooks/pre-commit",  # protected
    ".git/config",  # protected
    ".cerveau/config.toml",  # protected
    "link/escaped.txt",  # a symlink inside pointing out
    "../outside/direct.txt",  # .. out
    "ABS_OUTSIDE/abs.txt",  # absolute outside
]


def _under(p: Path, root: Path) -> bool:
    return p == root or root in p.parents


@dataclass
class World:
    ws: Path
    outside: Path
    mode: str
    enforced: bool
    log: list[tuple[str, int, str]] = field(default_factory=list)  # (event, call index, scope_key)
    landed: list[tuple[Path, int, str, Verdict]] = field(default_factory=list)

    def resolve(self, target: str) -> Path:
        if target.startswith("ABS_OUTSIDE/"):
            return self.outside / target.split("/", 1)[1]
        return Path(os.path.realpath(self.ws / target))

    def outside_boundary(self, p: Path) -> bool:
        """The oracle, written independently of the Policy."""
        if self.mode == "full-access":
            return False
        if self.mode == "read-only":
            return True
        if not _under(p, self.ws):
            return True
        rel = p.relative_to(self.ws).as_posix()
        return rel.startswith((".git/hooks", ".git/config", ".cerveau/config.toml"))

    def kernel_allows(self, p: Path, grant: Grant | None) -> bool:
        """What the sandbox would let a command write."""
        if not self.enforced or self.mode == "full-access":
            return True
        for extra in grant.extra_writable if grant else ():
            if _under(p, Path(os.path.realpath(extra))):
                return True
        if self.mode == "read-only" or not _under(p, self.ws):
            return False
        rel = p.relative_to(self.ws).as_posix()
        return not rel.startswith((".git", ".cerveau/config.toml"))


def _execute(
    world: World, i: int, tool: str, target: Path, verdict: Verdict, grant: Grant | None
) -> bool:
    if tool == "write_file" or world.kernel_allows(target, grant):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"call {i}\n")
        world.landed.append((target, i, tool, verdict))
        return True
    return False


def _decide(world: World, policy: Policy, i: int, verdict: Verdict, decision: str) -> bool:
    world.log.append(("requested", i, verdict.scope_key))
    if decision == "deny":
        world.log.append(("denied", i, verdict.scope_key))
        return False
    if decision == "session":
        policy.grant_session(verdict)
        world.log.append(("approved_session", i, verdict.scope_key))
    else:
        world.log.append(("approved", i, verdict.scope_key))
    return True


def _approval_precedes(world: World, i: int, verdict: Verdict) -> bool:
    for event, j, key in world.log:
        if j > i:
            break
        if event == "approved" and j == i:
            return True
        if event == "approved_session" and key and key == verdict.scope_key:
            return True
    return False


calls = st.lists(
    st.tuples(
        st.sampled_from(["write_file", "bash"]),
        st.integers(0, len(TARGETS) - 1),
        st.booleans(),  # bash: declare the target (True) or hide it inside the command (False)
        st.sampled_from(["approve", "session", "deny"]),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from(["read-only", "workspace-write", "full-access"]),
    approval=st.sampled_from(["untrusted", "on-failure", "on-request", "never"]),
    enforced=st.booleans(),
    network=st.booleans(),
    steps=calls,
)
def test_no_write_outside_the_boundary_lands_without_approval(
    mode: str, approval: str, enforced: bool, network: bool, steps: list[tuple[str, int, bool, str]]
) -> None:
    root = Path(tempfile.mkdtemp(prefix="cerveau-prop-"))
    try:
        ws = root / "ws"
        (ws / ".git" / "hooks").mkdir(parents=True)
        (ws / ".cerveau").mkdir()
        outside = root / "outside"
        outside.mkdir()
        (ws / "link").symlink_to(outside)
        world = World(Path(os.path.realpath(ws)), Path(os.path.realpath(outside)), mode, enforced)
        policy = Policy(
            ws,
            mode,
            approval,
            [RuleConfig(pattern="*.lock", action="ask")],  # type: ignore[arg-type]
            network_grant=lambda: network,
            enforced=enforced,
        )

        for i, (tool, t, declare, decision) in enumerate(steps):
            target = world.resolve(TARGETS[t])
            if tool == "write_file":
                declared = Declared(writes=[target])
            else:
                writes = [ws, target] if declare else [ws]
                declared = Declared(reads=[ws], writes=writes, command=f"make out{i}")
            verdict = policy.evaluate(tool, declared)
            if verdict.action == "deny":
                world.log.append(("denied", i, verdict.scope_key))
                continue
            if verdict.action == "ask" and not _decide(world, policy, i, verdict, decision):
                continue
            if _execute(world, i, tool, target, verdict, verdict.grant):
                continue
            # The sandbox refused it: on-failure may offer a rerun with more room.
            retry = policy.after_failure(
                tool, declared, 2, f"cannot create {target}: Read-only file system"
            )
            if retry is not None and _decide(world, policy, i, retry, decision):
                _execute(world, i, tool, target, retry, retry.grant)

        for path, i, tool, verdict in world.landed:
            if world.outside_boundary(path):
                assert _approval_precedes(world, i, verdict), (path, i, tool, verdict, world.log)
            if tool == "write_file" and path.name.endswith(".lock"):
                assert _approval_precedes(world, i, verdict), (path, i, verdict, world.log)
    finally:
        shutil.rmtree(root, ignore_errors=True)
