"""Seconds from Esc Esc to the loop being idle while the precheck's suite runs (issue 33: 2 min
27 s on a real library; the suite ran on, then a question nobody saw waited out its 120 s).

    .venv/bin/python benchmarks/precheck_stop.py [--repo PATH] [--sleep 20] [--timeout 120]

A session over a tiny workspace whose done check is `sleep N; true` (a suite that takes N s and
passes), the scripted llama-server as the model, the approver the TUI uses (BusApprover, its
timeout the config's default 120 s) with nobody answering. The turn starts; once the check's
`sleep` is seen in /proc (host side), `engine.interrupt()` (what Esc Esc calls); the figure is the
time until `engine.run` returns, and whether the check's process was still alive then. `--repo`
imports the package of another checkout (the code before: `git worktree add /tmp/old <commit>`).
Prints figures only; no assertions.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path


def sleeping(token: str) -> list[int]:
    """cerveau_tui/testing/proc_scan.py's, copied: `--repo` imports another checkout's package,
    which may not have it (the code before)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 2 and argv[0].endswith(b"sleep") and argv[1] == token.encode():
            found.append(int(pid))
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--sleep", type=float, default=20.0)
    ap.add_argument("--timeout", type=float, default=120.0, help="the approver's (seconds)")
    ap.add_argument("--task", default="fix the failing test")
    args = ap.parse_args()
    sys.path.insert(0, args.repo)
    from cerveau_tui.bus import Emitter, Recorder
    from cerveau_tui.config import load_settings
    from cerveau_tui.loop.approver import BusApprover
    from cerveau_tui.provider.llama import LlamaProvider
    from cerveau_tui.session import build_session
    from cerveau_tui.testing.scripted_server import ScriptedServer

    token = f"{args.sleep:.4f}"
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / ".cerveau").mkdir(parents=True)
        (ws / ".cerveau/config.toml").write_text(
            f'[[done.criteria]]\nname = "suite"\ncommand = "sleep {token}; true"\n'
        )
        settings = load_settings(
            ws, environ={}, user_config=Path(tmp) / "none.toml", trust_workspace=True
        )
        with ScriptedServer({"responses": [{"content": "done"}]}) as srv:
            bus = Emitter()
            rec = Recorder(bus)
            approver = BusApprover(bus, timeout_s=args.timeout)
            s = build_session(settings, bus=bus, approver=approver, provider=LlamaProvider(srv.url))
            out: list[object] = []
            t = threading.Thread(target=lambda: out.append(s.engine.run(args.task)))
            t.start()
            deadline = time.monotonic() + 30
            while not sleeping(token) and time.monotonic() < deadline:
                time.sleep(0.02)
            pids = sleeping(token)
            pressed = time.monotonic()
            s.engine.interrupt()
            t.join()
            idle = time.monotonic() - pressed
            alive = [p for p in pids if Path(f"/proc/{p}").exists()]
            asked = len(rec.of("approval_requested"))
            box = (rec.of("session_started") or [None])[0]
            backend = box.payload.get("sandbox", {}).get("backend", "?") if box else "?"
            s.close()
    reason = getattr(out[0], "reason", "?") if out else "?"
    print(f"repo: {args.repo}   uid: {os.getuid()}   sandbox: {backend}")
    print(
        f"check: sleep {token}; true   approver timeout: {args.timeout:g} s   task: {args.task!r}"
    )
    print(f"seen running before Esc Esc: {bool(pids)}")
    print(f"Esc Esc -> idle: {idle:.2f} s   turn: {reason}   questions raised after: {asked}")
    print(f"check process alive when idle: {bool(alive)}")


if __name__ == "__main__":
    main()
