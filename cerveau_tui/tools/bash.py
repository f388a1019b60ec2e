"""bash: a shell command run through the sandbox runner, never around it."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from .. import protocol as P
from ..sandbox.base import CommandResult
from ..sandbox.command import CommandSpec
from .args import NonBlank
from .base import Declared, RetryClass, Tool, ToolContext, ToolError, ToolResult

#: `/tmp` as a path in a command (`> /tmp/out.log`, `cd /tmp`), not `./tmp` or `build/tmp`.
_TMP_PATH = re.compile(r"(?<![\w./~-])/tmp(?![\w.-])")

PRIVATE_TMP_NOTICE = (
    "commands run with a private /tmp, emptied when each command ends: what a command writes "
    "under /tmp is not in your machine's /tmp and is gone afterwards (the model was told; keep "
    "files you want in the workspace). Said once per session."
)

NETWORK_HINTS = (
    "curl ",
    "wget ",
    "pip install",
    "pip3 install",
    "npm install",
    "apt-get",
    "apt ",
    "git clone",
    "git fetch",
    "git pull",
    "ssh ",
)


class Bash(Tool):
    name = "bash"
    description = "Run a shell command in the workspace (sandboxed; /tmp is private and emptied after each command)."
    retry_class = RetryClass.TRANSIENT
    mutates = True
    runs_command = True

    class Args(BaseModel):
        command: NonBlank
        timeout: int | None = Field(default=None, description="seconds")

    def declare(self, args: Args, ctx: ToolContext) -> Declared:  # type: ignore[override]
        network = any(h in f" {args.command}" for h in NETWORK_HINTS)
        return Declared(
            reads=[ctx.workspace], writes=[ctx.workspace], command=args.command, network=network
        )

    def __init__(self) -> None:
        self._told_private_tmp = False

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        if not args.command.strip():
            raise ToolError("command is empty")
        if ctx.runner is None:
            raise ToolError("no command runner is configured", RetryClass.TRANSIENT)
        # The model may ask for less time than the person's `bash_timeout_s`, never more: a
        # `timeout: 99999999` kept a hung command (and the turn) alive for days.
        timeout = float(args.timeout) if args.timeout and args.timeout > 0 else ctx.bash_timeout
        timeout = max(1.0, min(timeout, ctx.bash_timeout))
        fp = ctx.fingerprinter
        before = fp.scan() if fp is not None else None
        res: CommandResult = ctx.runner.run(
            CommandSpec(
                args.command,
                workspace=ctx.workspace,
                mode=ctx.mode,
                timeout=timeout,
                output_cap=ctx.output_cap,
                grant=ctx.grant,
                cancel=ctx.cancel,
            )
        )
        self._tell_private_tmp(args.command, ctx)
        # A command may change anything in the workspace. With a fingerprinter we know exactly
        # what it changed (and a read-only command leaves the verification seal alone); without
        # one, assume it wrote, so a stale seal is never reported as fresh.
        wrote: list[Path] = []
        if fp is not None and before is not None:
            wrote = [ctx.workspace / rel for rel in fp.changed_since(before)]
            for p in wrote:
                ctx.state.record_write(p)
        else:
            ctx.state.record_write(ctx.workspace)
        out = res.output.rstrip("\n")
        if res.timed_out:
            out += f"\n[killed: timed out after {timeout:g} s]"
        elif res.interrupted:
            out += "\n[killed: the person interrupted it]"
        # A flood is killed at its cap: say so, or the model reads a cut log as the whole story.
        out += "".join(f"\n[{n}]" for n in res.notes if n.startswith("killed: "))
        if res.background_pgid:
            out += "\n[processes left running in the background are owned by this session]"
        ok = res.exit_code == 0
        body = out if out.strip() else "(no output)"
        return ToolResult(
            ok=ok,
            output=f"{body}\n[exit code {res.exit_code if res.exit_code is not None else 'none'}]",
            error_class=None
            if ok or res.interrupted
            else RetryClass.TRANSIENT
            if res.timed_out
            else RetryClass.ARGS,
            exit_code=res.exit_code,
            wrote=wrote,
            meta={
                "timed_out": res.timed_out,
                "truncated": res.truncated,
                "duration_ms": res.duration_ms,
            },
        )

    def _tell_private_tmp(self, command: str, ctx: ToolContext) -> None:
        """The model's description says /tmp is private; the person was never told, and looked
        on their own /tmp for a log a command had written there. Once, the first time a command
        names /tmp under the backend that makes it private (bubblewrap; not full-access, which
        runs without the sandbox)."""
        if self._told_private_tmp or ctx.bus is None or ctx.mode == "full-access":
            return
        if ctx.runner is None or ctx.runner.backend != "bubblewrap":
            return
        if _TMP_PATH.search(command):
            self._told_private_tmp = True
            ctx.bus.emit(P.NoticePayload(text=PRIVATE_TMP_NOTICE))
