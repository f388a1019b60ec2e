"""`cerveau rewind`: list a session's turns, or put the workspace and/or the conversation back to
how they were just before one of them started (session/rewind/ does it; this is the CLI).

    cerveau rewind --list [--session ID|last] [--json]
    cerveau rewind [--session ID|last] --to-turn N [--code-only|--conversation-only] [--force]
    cerveau rewind [--session ID|last] --forward [--force]

Exit 0 when done; 1 when refused (files changed outside the harness since then, named; a session
open in another cerveau; an expired point) or when a path could not be put back (named; the rest
was); 2 for bad usage. The session log records the rewind:
`cerveau run --resume last` continues from the rewound conversation.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .text_safety import visible


def add_rewind_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "rewind", help="go back to an earlier turn: the code, the conversation or both"
    )
    p.add_argument("--workspace", "-w", type=Path, default=None)
    p.add_argument("--session", default="last", help="a session id, or last (the default)")
    p.add_argument("--list", action="store_true", help="list the session's turns")
    p.add_argument("--json", action="store_true")
    p.add_argument("--to-turn", type=int, default=None, metavar="N")
    p.add_argument("--to-point", default=None, metavar="ID", help="a point of --list --all")
    p.add_argument(
        "--all", action="store_true", help="with --list: every point (turns, !cmds, rewinds)"
    )
    p.add_argument("--forward", action="store_true", help="undo the last rewind")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--code-only", action="store_true")
    g.add_argument("--conversation-only", action="store_true")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite files changed outside the harness (forward brings them back)",
    )
    return p  # type: ignore[no-any-return]


def rewind_command(args: argparse.Namespace) -> int:
    from .plan.persist import SessionBusy, SessionLog
    from .session.listing import ResumeError, resolve_session
    from .session.rewind import OutsideChanges, Rewinder, RewindError
    from .session.stored import read_session

    ws = (args.workspace or Path.cwd()).resolve()
    if not args.list and args.to_turn is None and args.to_point is None and not args.forward:
        print(
            "cerveau rewind: say --list, --to-turn N, --to-point ID or --forward", file=sys.stderr
        )
        return 2
    try:
        sid = resolve_session(ws, args.session)
    except ResumeError as exc:
        print(f"cerveau rewind: {exc}", file=sys.stderr)
        return 1
    try:
        log = SessionLog(ws, sid)  # the lock: a live session is not rewound under its feet
    except SessionBusy as exc:
        print(f"cerveau rewind: {exc}", file=sys.stderr)
        return 1
    try:
        hlen = len(read_session(ws, sid).history)
        rw = Rewinder.for_session(ws, sid, log=log, history_len=hlen)
        if args.list and args.all:
            points = [
                {"point": p.id, "at": p.at, "task": p.task, "time": p.time}
                for p in rw.checkpoints()
            ]
            print(json.dumps(points) if args.json else "\n".join(
                visible(f"{p['point']}  {p['at']:<8} {p['time']}  {p['task']}") for p in points
            ))  # fmt: skip
            return 0
        if args.list:
            rows = [t.wire() for t in rw.turns()]
            if args.json:
                print(json.dumps(rows))
            else:
                for r in rows:
                    mark = " " if r["current"] else "~"
                    print(
                        visible(
                            f"{mark}{r['turn']:>3}  {r['time']}  {r['files_changed']} file(s)"
                            f" +{r['added']} -{r['removed']}  {r['task']}"
                        )
                    )
            return 0
        mode = "code" if args.code_only else "conversation" if args.conversation_only else "both"
        try:
            if args.forward:
                result = rw.forward(force=args.force)
            elif args.to_point is not None:
                result = rw.rewind_to_point(args.to_point, mode, force=args.force)  # type: ignore[arg-type]
            else:
                result = rw.rewind(args.to_turn, mode, force=args.force)  # type: ignore[arg-type]
        except OutsideChanges as exc:
            _say(args.json, {"ok": False, "outside": exc.paths, "error": str(exc)})
            # After a forced forward no forward is left: the point it took first still has them.
            back = (
                "--list --all, then --to-point the last 'rewind' point, brings them back"
                if args.forward
                else "forward brings them back"
            )
            print(
                "cerveau rewind: refused, changed outside the harness since then (--force"
                f" overwrites them; {back}): " + ", ".join(exc.paths),
                file=sys.stderr,
            )
            return 1
        except RewindError as exc:
            _say(args.json, {"ok": False, "error": str(exc)})
            print(f"cerveau rewind: {exc}", file=sys.stderr)
            return 1
        _say(
            args.json,
            {
                "ok": not result.refused,
                "turn": result.turn,
                "mode": result.mode,
                "restored": result.restored,
                "removed": result.removed,
                "refused": result.refused,
                "overwritten": result.outside,
                "history_len": result.history_len,
            },
        )
        if not args.json:
            print(
                visible(
                    f"rewound ({result.mode}): {len(result.restored)} restored,"
                    f" {len(result.removed)} removed"
                )
            )
        if result.refused:
            # The workspace is not as it was at that point: not a success. (A folder holding
            # ignored files where a file goes back, say: ignored files are never touched.)
            print(
                visible("cerveau rewind: NOT put back: " + ", ".join(result.refused)),
                file=sys.stderr,
            )
            return 1
        return 0
    finally:
        log.close()


def _say(as_json: bool, obj: dict[str, Any]) -> None:
    if as_json:
        print(json.dumps(obj))
