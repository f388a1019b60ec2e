"""Seconds from Enter to the model's first request, turn after turn (issue 33: before every turn
the whole suite ran, 26-36 s on more-itertools, with "running … iter 0" on screen).

    .venv/bin/python benchmarks/first_request.py --workspace DIR [--repo PATH] [--turns 3]

DIR is copied to a private temporary folder; its done check is `[[done.criteria]] python3 -m
pytest -q` (the same command before and after, so the figures compare the harness, not the
detection). The scripted llama-server is the model (it answers "done" at once); the approver says
yes to any question (a person at the keyboard answering at once) and they are counted. Each turn
sends a task that aims at the check ("fix the failing test"); the tree is not changed between
turns. `--repo` imports another checkout's package (the code before: `git worktree add /tmp/old
<commit>`). Prints figures only.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--task", default="fix the failing test")
    args = ap.parse_args()
    sys.path.insert(0, args.repo)
    from cerveau_tui.bus import Emitter, Recorder
    from cerveau_tui.config import load_settings
    from cerveau_tui.loop.approver import ApproveAll
    from cerveau_tui.provider.llama import LlamaProvider
    from cerveau_tui.session import build_session
    from cerveau_tui.testing.scripted_server import ScriptedServer

    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        ws = Path(tmp) / "ws"
        shutil.copytree(args.workspace, ws, ignore=shutil.ignore_patterns(".cerveau"))
        (ws / ".cerveau").mkdir()
        (ws / ".cerveau/config.toml").write_text(
            '[[done.criteria]]\nname = "suite"\ncommand = "python3 -m pytest -q"\n'
        )
        settings = load_settings(
            ws, environ={}, user_config=Path(tmp) / "none.toml", trust_workspace=True
        )
        script = {"responses": [{"content": "done"}] * (args.turns * 8)}
        with ScriptedServer(script) as srv:
            bus = Emitter()
            rec = Recorder(bus)
            s = build_session(
                settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(srv.url)
            )
            rows = []
            for turn in range(1, args.turns + 1):
                seen = len(srv.requests)
                asked = len(rec.of("approval_requested"))
                started = time.monotonic()
                first: list[float] = []

                def watch(seen: int = seen, first: list[float] = first) -> None:
                    while len(srv.requests) == seen:
                        time.sleep(0.01)
                    first.append(time.monotonic())

                w = threading.Thread(target=watch, daemon=True)
                w.start()
                s.engine.run(args.task)
                w.join(timeout=1)
                took = (first[0] if first else time.monotonic()) - started
                rows.append((turn, took, len(rec.of("approval_requested")) - asked))
            s.close()
    print(f"repo: {args.repo}   workspace: {args.workspace}")
    for turn, took, asked in rows:
        print(f"turn {turn}: Enter -> first request {took:6.2f} s   questions: {asked}")


if __name__ == "__main__":
    main()
