"""Running one of the person's hooks: through the session's runner, as the model's commands run.

`where = "sandbox"` (the default) is the boundary the model's commands get, in the session's
sandbox mode: a hook that reads the model's bytes runs with no more room than the model. `host`
is the person's own rights (full-access through the same runner: the minimal environment, its
own process group, killed with its group at its timeout), for what needs the machine: a
notifier, a log outside the workspace. Each run is one `hook_ran` event."""

from __future__ import annotations

import os
import pwd
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import host_process
from ..bus import Emitter
from ..config import HookConfig
from ..protocol.person_hooks import HookOutcome, HookRan
from ..sandbox.base import CommandResult, CommandSpec, Runner
from ..sandbox.process import kill_group
from . import contract

#: The wrapper's output: the hook's stdout (the model reads CONTEXT_MAX_BYTES of it), the
#: separator and the stderr head; more is cut in the middle, which keeps the separator's tail.
OUTPUT_CAP = 64 * 1024


UNCONFINED = (
    'not run: no sandbox is enforced here (cerveau doctor says why); where = "host" runs it '
    "with your rights"
)


@dataclass(frozen=True)
class Ran:
    name: str
    outcome: HookOutcome
    exit_code: int | None
    stdout: str  # bounded: what may go to the model as context
    stderr: str  # bounded: the reason of a block, or what failed

    @property
    def reason(self) -> str:
        return self.stderr.strip() or f"(the hook {self.name} gave no reason on stderr)"


@dataclass
class HookRunner:
    runner: Runner
    workspace: Path
    mode: str  # the session's sandbox mode: what a "sandbox" hook runs in
    bus: Emitter

    def _said(self, name: str, event: str, tool: str, hook: HookConfig, why: str) -> Ran:
        self._emit(name, event, tool, hook, None, 0, "error", why)
        return Ran(name, "error", None, "", why)

    def _emit(
        self,
        name: str,
        event: str,
        tool: str,
        hook: HookConfig,
        exit_code: int | None,
        ms: int,
        got: HookOutcome,
        stderr: str,
    ) -> None:
        message = "" if got == "ok" else stderr.strip()
        self.bus.emit(
            HookRan(name=name, event=event, exit=exit_code, ms=ms, outcome=got,
                    where=hook.where, tool=tool, message=message)
        )  # fmt: skip

    def _host_env(self, hook: HookConfig) -> dict[str, str]:
        """A host hook's HOME is the person's, never the workspace the runner gives a full-access
        command: found by probing, `git status` in a host hook read the model's `.gitconfig`
        from a workspace HOME and ran its `core.fsmonitor` with the person's rights. Its PATH is
        the person's without a relative entry or one in the workspace (host_process.person_path):
        found by probing, with `bin` or `<workspace>/bin` on the harness's PATH (a direnv habit),
        a hook of ["/usr/bin/true"] ran the model's `bin/mktemp` (the wrapper's own plumbing)
        on the host, cwd being the workspace. Plus the variables of the person's environment
        this hook names (`env`)."""
        if hook.where != "host":
            return {}
        passed = {k: os.environ[k] for k in hook.env if k in os.environ}
        home = pwd.getpwuid(os.getuid()).pw_dir
        return {**passed, "HOME": home, "PATH": host_process.person_path(self.workspace)}

    def run(
        self,
        hook: HookConfig,
        event: str,
        fields: dict[str, Any],
        *,
        cancel: threading.Event | None = None,
        tool: str = "",
        can_block: bool = True,
    ) -> Ran:
        """`can_block`: False where nothing is left to block (a turn_end after the turn was
        stopped): exit 2 is then an error, said as one."""
        name = contract.hook_name(hook.name, hook.command)
        body = contract.event_json(
            {
                "event": event,
                "session_id": self.bus.session_id,
                "turn_id": self.bus.turn_id,
                "workspace": str(self.workspace),
                **fields,
            }
        )
        if hook.where == "sandbox" and not self.runner.enforced and self.mode != "full-access":
            # Unconfined, a "sandbox" hook would run with the person's rights on what the model
            # wrote, unasked (the model's own commands are asked about there): not run, said.
            return self._said(name, event, tool, hook, UNCONFINED)
        separator = contract.new_separator()
        spec = CommandSpec(
            command=contract.wrapper(contract.argv_of(hook.command), separator),
            workspace=self.workspace,
            mode="full-access" if hook.where == "host" else self.mode,
            timeout=hook.timeout_s,
            output_cap=OUTPUT_CAP,
            cancel=cancel,
            env={contract.EVENT_VAR: body, "CERVEAU_HOOK": event, **self._host_env(hook)},
        )
        started = time.monotonic()
        try:
            result = self.runner.run(spec)
        except Exception as exc:  # a launcher's failure is the hook's error, never the turn's
            result = CommandResult(exit_code=126, output=f"\n{separator}\ncould not start: {exc}")
        ms = int((time.monotonic() - started) * 1000)
        if result.background_pgid is not None and spec.mode == "full-access":
            # Nothing of a hook outlives its run: in the sandbox its runner sees to it (PID
            # namespace, cgroup); on the host, this (a notifier that forked and returned).
            kill_group(result.background_pgid)
        stdout, stderr = contract.split_output(result.output, separator)
        got = contract.outcome(
            event if can_block else "",
            result.exit_code,
            timed_out=result.timed_out,
            interrupted=result.interrupted,
        )
        stderr = contract.clip(stderr, contract.STDERR_MAX_BYTES)
        if got == "error" and result.exit_code == 2:
            stderr = f"exit 2 blocks nothing here ({event}). {stderr}".strip()
        elif got == "timeout":
            stderr = f"killed after {hook.timeout_s:g} s (timeout_s) with its process group"
        self._emit(name, event, tool, hook, result.exit_code, ms, got, stderr)
        return Ran(
            name, got, result.exit_code, contract.clip(stdout, contract.CONTEXT_MAX_BYTES), stderr
        )
