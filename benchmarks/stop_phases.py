"""Seconds from the interrupt (what Esc Esc and Ctrl+C call) to the loop being idle, in each phase
a turn can be stopped in (issue 33: 25.8 s while llama-server read the prompt, 1.2 s during
generation). The precheck has its own: benchmarks/precheck_stop.py.

    .venv/bin/python benchmarks/stop_phases.py [--before] [--real]

`--before`: the provider does not hang up (provider/hangup.py's shutdown made a no-op), which is
the code before for the prompt-reading phase. `--real`: also the embedded llama-server (SmolLM2,
`-b 512`) reading a 7,000-word prompt, stopped 1 s in: the seconds until the call returns, and
until a tiny request is answered (the slot free again; llama-server ends the batch in flight).

Each phase is a fresh session over an empty workspace against the scripted server:
- prompt reading: the server says nothing at all, headers included, for 20 s (`silent_s`: as
  llama-server holding its response until the first batch of a long prompt is read);
- generation: reasoning tokens with 3 s between them (the scripted reasoning control's hold);
- a tool: `sleep 30.xxxx` as a bash command, approved (seen in /proc before the interrupt);
- a dialog: the same command under approval "untrusted", its question waiting (BusApprover,
  nobody answering).
The interrupt comes 0.5 s into the phase; the figure is the time until `engine.run` returns, with
what the host saw (the server's hang-up count, the sleep still alive). Prints figures only.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll, BusApprover
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.proc_scan import sleeping
from cerveau_tui.testing.scripted_control import ScriptedControl
from cerveau_tui.testing.scripted_server import ScriptedServer

INTO_S = 0.5  # how far into the phase the interrupt comes
TOKEN = "30.0417"  # a sleep no other process sleeps for


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def wait_for(cond: Callable[[], bool], within_s: float = 30.0) -> bool:
    end = time.monotonic() + within_s
    while not cond() and time.monotonic() < end:
        time.sleep(0.02)
    return cond()


def phase(
    name: str,
    srv: ScriptedServer,
    started: Callable[[Recorder], bool],
    *,
    approval: str = "never",
    hangs_up: bool = False,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        settings = load_settings(ws, environ={}, user_config=Path(tmp) / "none.toml")
        settings = settings.model_copy(update={"approval": approval})
        bus = Emitter()
        rec = Recorder(bus)
        approver = BusApprover(bus) if approval == "untrusted" else ApproveAll()
        s = build_session(settings, bus=bus, approver=approver, provider=LlamaProvider(srv.url))
        try:
            t = threading.Thread(target=s.engine.run, args=("go",), daemon=True)
            t.start()
            seen = wait_for(lambda: started(rec))
            time.sleep(INTO_S)
            pressed = time.monotonic()
            s.engine.interrupt()
            t.join(120)
            idle = time.monotonic() - pressed
            alive = bool(sleeping(TOKEN))
            starts = rec.of("session_started")
            backend = starts[0].payload.get("sandbox", {}).get("backend", "?") if starts else "?"
        finally:
            s.close()
    print(
        f"{name:<15} interrupt -> idle: {idle:6.2f} s   phase seen: {seen}   "
        f"server saw hang-up: {srv.state.hung_up if hangs_up else '-'}   sleep alive: {alive}   "
        f"sandbox: {backend}"
    )


def main() -> None:
    before = "--before" in sys.argv[1:]
    if before:
        from cerveau_tui.provider.hangup import Hangup

        Hangup._shut = lambda self: None  # type: ignore[method-assign]
    print(f"uid: {os.getuid()}   interrupt {INTO_S:g} s into each phase   before: {before}")
    silent = {"responses": [{"content": "read at last", "silent_s": 20}]}
    with ScriptedServer(silent) as srv:
        phase("prompt reading", srv, lambda _r: len(srv.requests) == 1, hangs_up=True)
    slow = {"responses": [{"reasoning": "thinking slowly " * 20, "content": "done"}]}
    with ScriptedServer(slow, control=ScriptedControl(hold_s=3.0)) as srv:
        phase("generation", srv, lambda r: bool(r.of("reply_progress") or r.of("reasoning")))
    with ScriptedServer({"responses": [bash(f"sleep {TOKEN}")]}) as srv:
        phase("tool", srv, lambda _r: bool(sleeping(TOKEN)))
    with ScriptedServer({"responses": [bash(f"sleep {TOKEN}")]}) as srv:
        phase("dialog", srv, lambda r: bool(r.of("approval_requested")), approval="untrusted")
    if "--real" in sys.argv[1:]:
        real()


def real() -> None:
    from cerveau_tui.provider.types import ProviderError
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.stack.server import ManagedServer

    loc = locate(stack_paths())
    assert loc.binary and loc.model, "run `python -m cerveau_tui.stack provision` first"
    with tempfile.TemporaryDirectory() as tmp:
        args = ["-b", "512", "-ub", "512"]
        server = ManagedServer(
            loc.binary, loc.model, n_ctx=8192, log_path=Path(tmp) / "log", extra_args=args
        )
        url = server.start(timeout_s=120)
        try:
            cancel = threading.Event()
            out: list[object] = []
            ask = [{"role": "user", "content": "word " * 7000}]

            def run() -> None:
                try:
                    out.append(
                        LlamaProvider(url, max_retries=0).complete(
                            ask, [], max_tokens=4, cancel=cancel
                        )
                    )
                except ProviderError as exc:
                    out.append(exc)

            t = threading.Thread(target=run, daemon=True)
            t.start()
            time.sleep(1.0)
            pressed = time.monotonic()
            cancel.set()
            t.join(300)
            back = time.monotonic() - pressed
            hi = [{"role": "user", "content": "hi"}]
            LlamaProvider(url, max_retries=0).complete(hi, [], max_tokens=2)
            free = time.monotonic() - pressed
        finally:
            server.stop()
    print(
        f"real server     interrupt -> idle: {back:6.2f} s   -> a tiny request answered: {free:.2f} s"
    )


if __name__ == "__main__":
    main()
