"""What a rewind costs the real llama-server (issue 25), through the cache probe (cache_probe.py).

Two turns on the scripted server (the file tools write a long note; a command rewrites it), each
request replayed to the REAL server for its `prompt_n` (tokens evaluated) and `cache_n` (reused
from its KV cache). Then a rewind of both to turn 2's start, and one more turn: its first
request is the history cut back to turn 2's start plus the new task, a prefix the server has
evaluated, so it should evaluate the new task's few tokens only. Twice:

    live     the rewind done in the running session (the TUI's Esc Esc), the next turn there
    resumed  the session closed, `cerveau rewind --to-turn 2` run as a separate process, then
             `run --resume last` (a new session on the same server): its first request

Used by benchmarks/rewind.py --real (prints) and tests/e2e/test_rewind_real.py (asserts).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cache_probe import CacheProbe, ProbeRecord
from .scripted_server import ScriptedServer

NOTE = "The harbour was quiet and the boats were tied up for the night. " * 24  # ~350 tokens


@dataclass(frozen=True)
class RewindCost:
    way: str  # "live" or "resumed"
    turn2_first: ProbeRecord  # turn 2's first request (what the rewind goes back to the start of)
    before: ProbeRecord  # the last request before the rewind
    after: ProbeRecord  # the first request after it
    cut_messages: int  # messages of the history the rewind kept

    def line(self) -> str:
        a, b = self.after, self.before
        return (
            f"{self.way}: the first request after the rewind evaluated {a.prompt_n:,} tokens,"
            f" reused {a.cache_n:,} from the cache ({a.messages} messages); the last request"
            f" before it: {b.prompt_n:,} evaluated, {b.cache_n:,} reused ({b.messages} messages)"
        )


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


SCRIPT = [
    _call("write_file", path="notes.txt", content=NOTE),
    {"content": "The note is written."},
    _call(
        "bash", command="printf 'short now\\n' > notes.txt && mkdir -p out/a && echo x > out/a/x"
    ),
    {"content": "Rewritten."},
    {"content": "Another way."},  # after the live rewind
]
RESUMED = [
    _call("write_file", path="notes.txt", content=NOTE),
    {"content": "The note is written."},
    _call("bash", command="printf 'short now\\n' > notes.txt"),
    {"content": "Rewritten."},
    {"content": "Once more."},  # after `cerveau rewind` and `run --resume last`
]
TASKS = ("Write the note about the harbour into notes.txt.", "Make notes.txt short.")


def _settings(ws: Path, cache: Path) -> Any:
    from ..config import load_settings

    env = {
        "CERVEAU_TEMPERATURE": "0",
        "CERVEAU_CONTEXT__SUMMARISE": "false",
        "CERVEAU_LIMITS__MAX_ITERATIONS": "6",
    }
    settings = load_settings(ws, environ=env, user_config=ws.parent / "none.toml")
    settings.cache_dir = cache
    return settings


def _session(ws: Path, cache: Path, url: str, resume: str | None = None) -> Any:
    from ..bus import Emitter
    from ..loop.approver import ApproveAll
    from ..provider.llama import LlamaProvider
    from ..session import build_session

    return build_session(
        _settings(ws, cache),
        bus=Emitter(),
        approver=ApproveAll(),
        provider=LlamaProvider(url),
        resume=resume,
    )


def _chats(probe: CacheProbe) -> list[ProbeRecord]:
    return [r for r in probe.records if r.kind == "chat"]


def _two_turns(s: Any, probe: CacheProbe) -> ProbeRecord:
    out = s.engine.run(TASKS[0])
    assert out.reason == "completed", out.message
    first = len(_chats(probe))
    out = s.engine.run(TASKS[1])
    assert out.reason == "completed", out.message
    return _chats(probe)[first]


def live(real_url: str, root: Path) -> RewindCost:
    ws = root / "live"
    ws.mkdir(parents=True)
    with ScriptedServer({"responses": SCRIPT}, n_ctx=1 << 20) as srv:
        with CacheProbe(real_url, srv.url) as probe:
            s = _session(ws, root / "cache", probe.url)
            try:
                turn2 = _two_turns(s, probe)
                before = _chats(probe)[-1]
                s.rewinder.rewind(2, "both")
                kept = len(s.engine.history)
                n = len(_chats(probe))
                out = s.engine.run("Say it another way.")
                assert out.reason == "completed", out.message
                after = _chats(probe)[n]
            finally:
                s.close()
    return RewindCost("live", turn2, before, after, kept)


def resumed(real_url: str, root: Path) -> RewindCost:
    ws = root / "resumed"
    ws.mkdir(parents=True)
    with ScriptedServer({"responses": RESUMED}, n_ctx=1 << 20) as srv:
        with CacheProbe(real_url, srv.url) as probe:
            s = _session(ws, root / "cache", probe.url)
            try:
                turn2 = _two_turns(s, probe)
                before = _chats(probe)[-1]
            finally:
                s.close()
            # The same environment as this process: the log is sealed under the person's key,
            # which lives beside the user config (CERVEAU_CONFIG): another one would refuse it.
            done = subprocess.run(
                [sys.executable, "-m", "cerveau_tui", "rewind", "--workspace", str(ws)]
                + ["--session", "last", "--to-turn", "2"],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            s = _session(ws, root / "cache", probe.url, resume="last")
            try:
                kept = len(s.engine.history)
                n = len(_chats(probe))
                out = s.engine.run("Say it once more.")
                assert out.reason == "completed", out.message
                after = _chats(probe)[n]
            finally:
                s.close()
    return RewindCost("resumed", turn2, before, after, kept)
