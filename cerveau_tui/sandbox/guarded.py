"""Any runner, plus: a command cannot leave code for the person's next `git` command.

The sandbox confines the command; it does not confine what the command leaves behind. A
`core.fsmonitor` in a repository the command created, a hook in a nested repository, a `.git`
file pointing at a planted config: the person's next `git status` runs them on the host, outside
any sandbox. So every command, in every mode (full-access too: the person's git runs outside the
sandbox whatever mode the command ran in), is bracketed by a git_guard snapshot and check, and
what it finds is undone (git_quarantine) before the result goes back to the model, which is told
in the output, so it does not retry blindly. `on_findings` lets the wiring raise a warning.

The file tools, undo and the polish rollback go through the same workspace guard
(workspace/git/change.guard_for): its lock serialises this check with theirs, and the snapshot
this check takes after each command is its index of the workspace's repositories.

Known limit: a process the command leaves running (NoSandbox, full-access; bubblewrap kills the
command's whole PID namespace) can write after the check. The next command's check catches it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..workspace.git import fast as git_fast
from ..workspace.git import guard as git_guard
from ..workspace.git import quarantine as git_quarantine
from ..workspace.git.change import guard_for
from ..workspace.git.config_rules import GitConfigParser, ParseConfig
from .base import CommandResult, CommandSpec, Runner

OnFindings = Callable[[list[git_guard.Finding]], None]
T = TypeVar("T")


class GuardedRunner:
    """`inner`, every command bracketed by the git check: the same backend and enforcement."""

    def __init__(
        self,
        inner: Runner,
        *,
        on_findings: OnFindings | None = None,
        quarantine_dir: Path | None = None,
        parse: ParseConfig | None = None,
        workspace: Path | None = None,
    ) -> None:
        """`workspace`: the session's; its file tools, undo and rollback then tell their
        findings to `on_findings` too."""
        self.inner = inner
        self.backend, self.enforced = inner.backend, inner.enforced
        self.on_findings = on_findings
        self.quarantine_dir = quarantine_dir
        self.parse = parse or GitConfigParser()
        if workspace is not None:
            guard_for(workspace).on_findings = on_findings

    def run(self, spec: CommandSpec) -> CommandResult:
        result, note = self.bracket(spec.workspace, lambda: self.inner.run(spec))
        if note is not None:
            _tell(result, note)
        return result

    def bracket(self, workspace: Path, act: Callable[[], T]) -> tuple[T, str | None]:
        """`act` (a command, an MCP server's call: anything that may write in the workspace)
        between the git check's snapshot and its check; what it left is undone. Returns what
        `act` returned and the note the model must read, if any."""
        guard = guard_for(workspace)
        before: git_guard.GitState | None = None
        try:
            # The walk only when the change set says git's files may have moved (git_fast).
            state = git_fast.before(workspace, parse=self.parse)
            seen = guard.command_view(guard.command_folders(state, parse=self.parse))
            before = state
        except OSError as exc:
            failure = exc
        result = act()
        findings: list[git_guard.Finding] = []
        actions: list[str] = []
        if before is not None:
            try:
                # One check at a time: commands of one reply run in parallel threads, and two
                # checks undoing the same file at once would race each other.
                with guard.lock:
                    findings, after = git_fast.check_state(workspace, before, parse=self.parse)
                    now = guard.command_view(guard.command_folders(before, after, parse=self.parse))
                    findings += guard.command_findings(seen, now, before, findings)
                    if findings:
                        actions = git_quarantine.neutralize(
                            workspace, findings, self.quarantine_dir
                        )
                        after = git_fast.fresh(workspace, parse=self.parse)
                    guard.known = after
            except OSError as exc:
                before, failure = None, exc
        if before is None:
            # Unavailable, never "clean": the person must know their next git is unchecked.
            return result, (f"[harness] the git guard could not check this command ({failure}); "
                            "git settings and hooks it may have left were NOT checked")  # fmt: skip
        if findings:
            if self.on_findings is not None:
                self.on_findings(findings)
            return result, harness_note(workspace, findings, actions)
        return result, None

    def kill_background(self) -> None:
        self.inner.kill_background()


def _tell(result: CommandResult, note: str) -> None:
    result.notes.append(note)
    result.output = f"{result.output.rstrip()}\n{note}" if result.output.strip() else note


def harness_note(
    workspace: Path | str, findings: list[git_guard.Finding], actions: list[str]
) -> str:
    """One line the model reads: what it left, and what was done about it."""
    seen: list[str] = []
    for f in findings:
        d = f.describe(workspace)
        if d not in seen:
            seen.append(d)
    undone = "; ".join(actions) if actions else "nothing could be done"
    failed = any(a.startswith("NOT undone") for a in actions)
    verb = "it was only partly undone" if failed else "it was undone"
    return (
        f"[harness] this command left code for your next git command ({'; '.join(seen)}); "
        f"{verb}: {undone}. Do not set programs in git config or add git hooks."
    )
