"""Entry points: the TUI (default), `run` (headless one-shot), `acp` (an editor's agent),
`sessions`, `doctor`, `stack`, `report`. `--resume ID|last` and `--continue` (the most recent
session) continue a stored one."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from . import __version__
from .config import ConfigError, Settings, load_settings
from .text_safety import visible


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workspace", "-w", type=Path, default=None, help="the workspace (default: cwd)"
    )
    p.add_argument("--server", default=None, help="URL of a running OpenAI-compatible server")
    p.add_argument(
        "--model", dest="model_path", default=None, help="a GGUF for the managed llama-server"
    )
    p.add_argument(
        "--sandbox", choices=["read-only", "workspace-write", "full-access"], default=None
    )
    p.add_argument(
        "--approval", choices=["untrusted", "on-failure", "on-request", "never"], default=None
    )
    p.add_argument("--max-tokens", type=int, default=None, help="token cap sent with every request")
    p.add_argument("--action-mode", choices=["auto", "native", "constrained"], default=None)
    p.add_argument(
        "--discuss", action="store_true", default=None, help="discussion mode: read and plan only"
    )
    p.add_argument(
        "--continue",
        dest="resume",
        action="store_const",
        const="last",
        default=None,
        help="resume the most recent session of the workspace (its conversation, plan, grants)",
    )
    p.add_argument(
        "--continue-from",
        dest="resume",
        metavar="SESSION",
        default=None,
        help="resume the given session (as --resume SESSION)",
    )
    _state_dir(p)


def _state_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--state-dir",
        dest="state_dir",
        default=None,
        metavar="DIR|user|auto",
        help="where the workspace's state (sessions, undo copies, memory) lives: a folder, user "
        "(the user state folder, e.g. for a read-only workspace), auto (user when the workspace "
        "is read-only), workspace (its .cerveau, the default)",
    )


def _settings(args: argparse.Namespace, workspace: Path | None = None) -> Settings:
    """`workspace`: the one an ACP client's session names (session/new's cwd), else the flag's."""
    flags: dict[str, Any] = {
        "server_url": args.server,
        "model_path": args.model_path,
        "sandbox": args.sandbox,
        "approval": args.approval,
        "max_tokens": args.max_tokens,
        "action_mode": args.action_mode,
        "discuss": args.discuss,
        "state_dir": getattr(args, "state_dir", None),
    }
    if getattr(args, "gate", None) is not None:  # `run --gate`: the done check for this run
        flags["done"] = {"gate": args.gate}
    settings = load_settings(
        workspace or args.workspace,
        flags,
        trust_workspace=bool(getattr(args, "trust_workspace_config", False)),
    )
    if args.cmd == "run" and "gate" not in settings.done.model_fields_set:
        # Headless, nobody is there to be asked (the TUI asks once per workspace), and without
        # a check a false "done" is silent: the detected check runs, inside the sandbox like the
        # model's own commands. benchmarks/gate.py ("default") has the figures. Set anywhere
        # (`--gate`, `[done] gate`, CERVEAU_DONE__GATE; "" keeps it undecided), it wins.
        settings.done.gate = "auto"
    if args.cmd in (None, "run", "acp"):  # where the model would work: refused before it starts
        from .sandbox.view import refuse_workspace
        from .workspace.private import refuse_shared

        # By name (/, the system, a home), then by property (shared, foreign: private.py).
        reason = refuse_workspace(settings.workspace) or refuse_shared(settings.workspace)
        if reason is not None:
            raise ConfigError(reason)
    if args.cmd is not None:  # the TUI says them in its chat (the alternate screen hides stderr)
        for warning in settings.warnings:
            print(visible(f"cerveau: warning: {warning}"), file=sys.stderr)
    return settings


class _NoResume(Exception):
    pass


def _resume(settings: Settings, spec: str | None) -> str | None:
    """The session id `--resume`/`--continue` name, checked before anything starts: a bad id, no
    sessions or an unreadable log is said on stderr (_NoResume), never a traceback."""
    if spec is None:
        return None
    from .session.listing import ResumeError, resolve_session

    try:
        return resolve_session(settings.workspace, spec)
    except ResumeError as exc:
        print(visible(f"cerveau: cannot resume: {exc}"), file=sys.stderr)
        raise _NoResume from None


def _report_subject(settings: Settings, spec: str | None) -> str | None:
    """The session `report` reads: the given one, else the newest of the person's own (a
    foreign log, a cloned repository's, would report its plan as theirs); said on stderr when
    it is foreign or when foreign ones were passed over."""
    from .session.listing import FOREIGN_WHY, list_sessions

    try:
        found = list_sessions(settings.workspace)
    except Exception:  # noqa: BLE001 - report_command says why it cannot read them
        return spec
    if spec is not None:
        if any(s.id == spec and s.foreign for s in found):
            print(visible(f"cerveau: session {spec!r} {FOREIGN_WHY}"), file=sys.stderr)
        return spec
    own = next((s for s in found if not s.foreign), None)
    if own is None:
        if found:
            print(visible(f"cerveau: session {found[0].id!r} {FOREIGN_WHY}"), file=sys.stderr)
        return None
    skipped = [s.id for s in found[: found.index(own)]]
    if skipped:
        print(f"cerveau: {len(skipped)} newer foreign log(s) not reported: {', '.join(skipped[:5])}",
              file=sys.stderr)  # fmt: skip
    return own.id


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cerveau", description="Drive a local model as a coding agent."
    )
    p.add_argument("--version", action="version", version=f"cerveau {__version__}")
    _common(p)
    p.add_argument(
        "--resume",
        dest="resume",
        nargs="?",
        const="last",
        metavar="ID|last",
        help="open the TUI on a stored session (the most recent without an id)",
    )
    sub = p.add_subparsers(dest="cmd")
    run = sub.add_parser("run", help="run one turn headless")
    _common(run)
    run.add_argument(
        "--resume",
        dest="resume",
        metavar="ID|last",
        help="continue a stored session (`last`: the most recent) with this task",
    )
    run.add_argument("task", help="what to do")
    run.add_argument("--json", action="store_true", help="print every event as one JSON line")
    run.add_argument(
        "--gate",
        default=None,
        metavar="auto|off|COMMAND",
        help="the done check when no [done] criteria are written: auto (the detected stack's "
        "check, e.g. pytest), off, or a command (default: [done] gate; unset, none)",
    )
    run.add_argument(
        "--yes",
        action="store_true",
        help="approve every crossing (only with --sandbox full-access)",
    )
    run.add_argument(
        "--trust-workspace-config",
        action="store_true",
        help="apply what .cerveau/config.toml asks for even where it lowers protection (the TUI asks instead)",
    )
    acp = sub.add_parser(
        "acp",
        help="an ACP agent on stdin/stdout, for an editor (Zed) or a terminal client (toad)",
    )
    _common(acp)
    doc = sub.add_parser("doctor", help="report server, model, tokenizer, config and sandbox")
    _common(doc)
    doc.add_argument("--json", action="store_true")
    ses = sub.add_parser("sessions", help="list the workspace's sessions, newest first")
    ses.add_argument(
        "--workspace", "-w", type=Path, default=None, help="the workspace (default: cwd)"
    )
    ses.add_argument("--json", action="store_true", help="a JSON list, each with `id`")
    _state_dir(ses)
    rep = sub.add_parser("report", help="print the plan report of the last (or a given) session")
    _common(rep)
    rep.add_argument("--session", default=None)
    rep.add_argument("--json", action="store_true")
    rul = sub.add_parser("rules", help="list (or revoke) the lasting always / never rules")
    rul.add_argument(
        "--workspace", "-w", type=Path, default=None, help="the workspace (default: cwd)"
    )
    rul.add_argument(
        "--json", action="store_true", help="a JSON list of {scope, decision, workspace}"
    )
    rul.add_argument(
        "--revoke",
        metavar="SCOPE",
        default=None,
        help="take back this workspace's rule for SCOPE (its scope key, or as spelled out)",
    )
    # The stack's grammar alone (args.py): its commands import httpx and the provisioning, which
    # the app's start, which builds this parser too, does not use.
    from .stack.args import add_stack_parser

    add_stack_parser(sub)
    from .mcp.manage import add_mcp_parser

    add_mcp_parser(sub)
    from .rewind_cli import add_rewind_parser

    _state_dir(add_rewind_parser(sub))
    return p


#: Where a `--server` URL that holds a credential travels instead of the command line.
HIDDEN_SERVER = "CERVEAU_SERVER_FROM_ARGV"


def _credential_off_the_command_line(argv: list[str]) -> None:
    """Restart without a credential on our own command line. Found by the credential probe: under
    Landlock (no PID namespace) a command's `cat /proc/*/cmdline` read the harness's own
    `--server http://alice:PASSWORD@...`; cmdline is readable by every process of the user, the
    environment is not (a ptrace check, which Landlock refuses across its domain)."""
    from .redact import redact_url

    for i, word in enumerate(argv):
        if word == "--":
            return
        if word == "--server" and i + 1 < len(argv):
            url, rest = argv[i + 1], argv[:i] + argv[i + 2 :]
        elif word.startswith("--server="):
            url, rest = word.split("=", 1)[1], argv[:i] + argv[i + 1 :]
        else:
            continue
        if redact_url(url) == url:
            return
        from . import host_process

        env = {**os.environ, HIDDEN_SERVER: url}
        host_process.replace_self(host_process.python_argv("cerveau_tui", *rest), env)


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        _credential_off_the_command_line(sys.argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    hidden = os.environ.pop(HIDDEN_SERVER, None)
    if hidden and hasattr(args, "server") and args.server is None:
        args.server = hidden
    try:
        if args.cmd == "sessions":
            from .session.listing import sessions_command

            ws = (args.workspace or Path.cwd()).resolve()
            load_settings(ws, {"state_dir": args.state_dir})  # where its sessions are
            code, text = sessions_command(ws, args.json)
            print(text if args.json and code == 0 else visible(text),
                  file=sys.stdout if code == 0 else sys.stderr)  # fmt: skip
            return code
        if args.cmd == "rewind":
            from .rewind_cli import rewind_command

            ws = (args.workspace or Path.cwd()).resolve()
            load_settings(ws, {"state_dir": args.state_dir})  # where its sessions are
            return rewind_command(args)
        if args.cmd == "rules":
            from .policy.rules_cli import rules_command

            ws = (args.workspace or Path.cwd()).resolve()
            code, text = rules_command(ws, args.json, args.revoke)
            print(text if args.json and code == 0 else visible(text),
                  file=sys.stdout if code == 0 else sys.stderr)  # fmt: skip
            return code
        if args.cmd == "mcp":
            from .mcp.manage import mcp_command

            return mcp_command(args, lambda ws: load_settings((ws or Path.cwd()).resolve()))
        if args.cmd == "run":
            from .headless import run_headless

            settings = _settings(args)
            return run_headless(
                settings,
                args.task,
                as_json=args.json,
                yes=args.yes,
                sandbox_flag=args.sandbox,
                resume=_resume(settings, args.resume),
            )
        if args.cmd == "acp":
            from .acp import run_acp

            if args.resume is not None:  # the client loads a session: session/load, session/list
                print(
                    "cerveau: acp takes no --continue; the client loads a session", file=sys.stderr
                )
                return 2
            if args.workspace is not None:
                _settings(args)  # a pinned workspace refused at once (exit 2), not per session
            return run_acp(lambda ws: _settings(args, ws), pinned=args.workspace)
        if args.cmd == "doctor":
            from .doctor import doctor

            return doctor(_settings(args), as_json=args.json)
        if args.cmd == "report":
            from .plan.report_cli import report_command

            settings = _settings(args)
            session = _report_subject(settings, args.session)
            code, text = report_command(settings.workspace, session, args.json)
            # The report quotes the log (the model's plan, its files, a cloned repository's log):
            # its terminal controls shown, not acted on. JSON already escapes them.
            print(text if args.json and code == 0 else visible(text))
            return code
        if args.cmd == "stack":
            from .stack.cli import run_stack_command

            return run_stack_command(args)
        from .app.app import run_app

        settings = _settings(args)
        resume = _resume(settings, args.resume)
        return run_app(settings, resume=resume, reload_settings=lambda: _settings(args))
    except ConfigError as exc:
        print(visible(f"cerveau: {exc}"), file=sys.stderr)
        return 2
    except _NoResume:
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `cerveau report --json | head`: the reader left; not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
