"""`cerveau acp` against the TUI's path on the same work (issue 39): how soon a client hears of a
prompt, and how soon a cancel ends the turn. Prints figures only.

    .venv/bin/python benchmarks/acp.py [--rounds N] [--real URL]

ACP: the real `cerveau acp` process driven by the SDK's client over its stdio (what an editor
does): from sending `session/prompt` to the first `session/update` received, and to the first
answer chunk; from sending `session/cancel` to the prompt's answer arriving.
TUI: the same session built in-process as the app builds it (BusApprover), the figures the app's
bus sees (the chat paints from these events; its frame cost is tui_bench.py's): from
`engine.run` called to the turn's first event and first token; from `engine.interrupt()` (what
Esc Esc calls) to `engine.run` returning, as stop_phases.py measures it.

Work, against the scripted server: a one-line answer (first update), and the cancel phases of
stop_phases.py: the model silent while it "reads the prompt" (20 s), reasoning held 3 s per
fragment (generation), a running `sleep` command, a dialog nobody answers. The cancel comes
0.5 s into the phase. `--real URL`: also the first update and a cancel 1 s into a reply from a
running llama-server (SmolLM2 from `cerveau stack up`, or the one the tests start).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder is sys.path[0], and this file is named `acp`: the SDK
# would import as this module. Its folder goes, so `acp` is the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from acp import text_block  # noqa: E402

from cerveau_tui.acp.updates import Translator  # noqa: E402
from cerveau_tui.bus import Emitter, Recorder  # noqa: E402
from cerveau_tui.config import load_settings  # noqa: E402
from cerveau_tui.loop.approver import ApproveAll, BusApprover  # noqa: E402
from cerveau_tui.protocol import Event, payload_of  # noqa: E402
from cerveau_tui.provider.llama import LlamaProvider  # noqa: E402
from cerveau_tui.session import build_session  # noqa: E402
from cerveau_tui.testing.acp_client import RecordingClient, cerveau_acp, pick, silent  # noqa: E402
from cerveau_tui.testing.proc_scan import sleeping  # noqa: E402
from cerveau_tui.testing.scripted_control import ScriptedControl  # noqa: E402
from cerveau_tui.testing.scripted_server import ScriptedServer  # noqa: E402

INTO_S = 0.5
TOKEN = "30.0529"  # a sleep no other process sleeps for


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def _answer(u: Any) -> bool:
    """The model's own text, not a harness line (updates.said_line)."""
    return u.session_update == "agent_message_chunk" and not u.content.text.startswith("\n\n*")


def med(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:7.1f} ms" if xs else "    n/a"


# --- ACP ------------------------------------------------------------------------------------


async def acp_first_updates(url: str, ws: Path, rounds: int) -> tuple[list[float], list[float]]:
    client = RecordingClient()
    first_any, first_text = [], []
    async with cerveau_acp(client, "--server", url, config_beside=ws) as conn:
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("warm up")])  # the first request
        for _ in range(rounds):
            seen = len(client.updates)
            sent = time.monotonic()
            await conn.prompt(session_id=sid, prompt=[text_block("hi")])
            mine = client.updates[seen:]
            first_any.append(mine[0][0] - sent)
            texts = [t for t, _, u in mine if _answer(u)]
            if texts:
                first_text.append(texts[0] - sent)
    return first_any, first_text


async def acp_cancel(
    url: str, ws: Path, started: Callable[[RecordingClient], bool], *flags: str
) -> tuple[float, str]:
    client = RecordingClient(answer=silent)
    async with cerveau_acp(client, "--server", url, *flags, config_beside=ws) as conn:
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        task = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        end = time.monotonic() + 60
        while not started(client) and time.monotonic() < end:
            await asyncio.sleep(0.01)
        await asyncio.sleep(INTO_S)
        pressed = time.monotonic()
        await conn.cancel(session_id=sid)
        answer = await task
        return time.monotonic() - pressed, answer.stop_reason


# --- the TUI's path (in-process, the app's bus) ---------------------------------------------


def _session(url: str, ws: Path, approval: str = "never") -> tuple[Any, Recorder, Emitter]:
    settings = load_settings(ws, environ={}, user_config=ws.parent / "none.toml")
    settings = settings.model_copy(update={"approval": approval})
    bus = Emitter()
    rec = Recorder(bus)
    approver = BusApprover(bus) if approval == "untrusted" else ApproveAll()
    s = build_session(settings, bus=bus, approver=approver, provider=LlamaProvider(url))
    return s, rec, bus


def tui_first_updates(
    url: str, ws: Path, rounds: int
) -> tuple[list[float], list[float], list[float]]:
    """The first bus event, the first event ACP would carry (its Translator says something of
    it: the same fact as ACP's first update, so the difference is the wire), the first token."""
    s, _, bus = _session(url, ws)
    first_any, first_carried, first_text = [], [], []
    try:
        s.engine.run("warm up")
        for _ in range(rounds):
            stamps: list[tuple[float, Event]] = []
            unsubscribe = bus.subscribe(lambda ev, at=stamps: at.append((time.monotonic(), ev)))
            sent = time.monotonic()
            s.engine.run("hi")
            unsubscribe()
            first_any.append(stamps[0][0] - sent)
            said = Translator(ws)
            carried = [t for t, ev in stamps if said(payload_of(ev))]
            if carried:
                first_carried.append(carried[0] - sent)
            texts = [t for t, ev in stamps if ev.type == "token"]
            if texts:
                first_text.append(texts[0] - sent)
    finally:
        s.close()
    return first_any, first_carried, first_text


def tui_cancel(url: str, ws: Path, started: Callable[[Recorder], bool], approval: str) -> float:
    s, rec, _ = _session(url, ws, approval)
    try:
        t = threading.Thread(target=s.engine.run, args=("go",), daemon=True)
        t.start()
        end = time.monotonic() + 60
        while not started(rec) and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(INTO_S)
        pressed = time.monotonic()
        s.engine.interrupt()
        t.join(120)
        return time.monotonic() - pressed
    finally:
        s.close()


# --- the work -------------------------------------------------------------------------------


def fresh() -> Path:
    ws = Path(tempfile.mkdtemp(prefix="cerveau-acp-bench-", dir="/var/tmp")) / "ws"
    ws.mkdir()
    return ws


def first_update(url: str, rounds: int, label: str) -> None:
    acp_any, acp_text = asyncio.run(acp_first_updates(url, fresh(), rounds))
    tui_any, tui_carried, tui_text = tui_first_updates(url, fresh(), rounds)
    print(f"{label}: prompt -> first update, median of {rounds}")
    print(f"  ACP  first session/update {med(acp_any)}   first model text {med(acp_text)}")
    print(
        f"  TUI  first bus event      {med(tui_any)}   first token      {med(tui_text)}"
        f"   first event ACP carries {med(tui_carried)}"
    )


def cancels() -> None:
    print(f"cancel -> the turn's end ({INTO_S:g} s into each phase; scripted server)")
    phases: list[tuple[str, dict[str, Any], ScriptedControl | None, str, Any, Any]] = [
        (
            "prompt reading",
            {"responses": [{"content": "read at last", "silent_s": 20}]},
            None,
            "never",
            None,
            None,
        ),
        (
            "generation",
            {"responses": [{"reasoning": "thinking slowly " * 20, "content": "done"}]},
            ScriptedControl(hold_s=3.0),
            "never",
            lambda c: bool(c.of("agent_thought_chunk")),
            lambda r: bool(r.of("reasoning")),
        ),
        (
            "tool",
            {"responses": [bash(f"sleep {TOKEN}")]},
            None,
            "never",
            lambda c: bool(sleeping(TOKEN)),
            lambda r: bool(sleeping(TOKEN)),
        ),
        (
            "dialog",
            {"responses": [bash("touch x.txt")]},
            None,
            "untrusted",
            lambda c: bool(c.asked),
            lambda r: bool(r.of("approval_requested")),
        ),
    ]
    for name, script, control, approval, acp_seen, tui_seen in phases:
        with ScriptedServer(script, control=control) as srv:
            seen_acp = acp_seen or (lambda _c, srv=srv: len(srv.requests) >= 1)
            took, reason = asyncio.run(
                acp_cancel(srv.url, fresh(), seen_acp, "--approval", approval)
            )
        with ScriptedServer(script, control=control) as srv:
            seen_tui = tui_seen or (lambda _r, srv=srv: len(srv.requests) >= 1)
            tui = tui_cancel(srv.url, fresh(), seen_tui, approval)
        print(
            f"  {name:<15} ACP session/cancel -> answer {took:6.2f} s ({reason})   "
            f"TUI interrupt -> idle {tui:6.2f} s"
        )


def real(url: str, rounds: int) -> None:
    first_update(url, rounds, "real llama-server")

    async def story() -> tuple[float, str]:
        ws = fresh()
        client = RecordingClient(answer=pick("allow_once"))
        async with cerveau_acp(client, "--server", url, config_beside=ws) as conn:
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            task = asyncio.ensure_future(
                conn.prompt(session_id=sid, prompt=[text_block("Tell me a long story.")])
            )
            await asyncio.sleep(1.0)
            pressed = time.monotonic()
            await conn.cancel(session_id=sid)
            answer = await task
            return time.monotonic() - pressed, answer.stop_reason

    took, reason = asyncio.run(story())
    print(f"  real model: session/cancel 1 s into a reply -> answer {took:.2f} s ({reason})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--real", metavar="URL", default=None)
    ap.add_argument("--no-scripted", action="store_true", help="only the --real figures")
    args = ap.parse_args()
    if not args.no_scripted:
        script = {"responses": [{"content": "hello there"}] * (2 * args.rounds + 4)}
        with ScriptedServer(script) as srv:
            first_update(srv.url, args.rounds, "scripted server")
        cancels()
    if args.real:
        real(args.real, max(1, args.rounds // 5))


if __name__ == "__main__":
    sys.exit(main())
