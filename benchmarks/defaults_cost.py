"""What turn close and delegation (the read-only `explore`) cost on the scripted server, on and
off, for the same work: should either be on by default (issue 22, "Defaults on the seeds' path")?

    .venv/bin/python benchmarks/defaults_cost.py

For each configuration it prints the requests sent, the prompt tokens the server was sent and
the tokens it had to EVALUATE (the rest came from its prompt cache: one slot, longest common
prefix, as llama-server; tokens here are the scripted server's ~4-bytes approximation), and the
wall time. The scripted model does the same work whatever the harness offers, so these are the
COSTS only: what a feature buys (a lesson recalled next session, a question answered without
the parent reading the files itself) cannot show on a script. A feature pays for its tokens here
only if its cost is ~0; otherwise the benefit must be measured on a real model first.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.bus import Emitter  # noqa: E402
from cerveau_tui.config import load_settings  # noqa: E402
from cerveau_tui.loop.approver import ApproveAll  # noqa: E402
from cerveau_tui.provider.llama import LlamaProvider  # noqa: E402
from cerveau_tui.session import build_session  # noqa: E402
from cerveau_tui.testing.script_state import approx_tokens, render_prompt  # noqa: E402
from cerveau_tui.testing.scripted_server import ScriptedServer  # noqa: E402

TURNS = 4
FILES = 6  # files the workspace holds, each read once per turn by the parent or the child


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


DISTILL = {"content": json.dumps({"facts": ["src/ holds the parser"], "lessons": []})}


def script(*, turn_close: bool, explore: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in range(TURNS):
        if explore:  # the parent asks; the child reads; the parent writes from its answer
            out.append(_call("explore", task=f"what do the files say, turn {t}?", path="src"))
            out += [_call("read_file", path=f"src/f{i}.py") for i in range(FILES)]
            out.append({"content": "f0..f5 each define one function."})
        else:
            out += [_call("read_file", path=f"src/f{i}.py") for i in range(FILES)]
        out.append(_call("write_file", path=f"out{t}.txt", content="summary\n"))
        out.append({"content": f"turn {t} done"})
        if turn_close:
            out.append(DISTILL)
    return out


def evaluated(bodies: list[dict[str, Any]]) -> tuple[int, int]:
    """(sent, evaluated) over the requests in order, with the scripted server's cache model."""
    cached: list[int] = []
    sent = evaluated_n = 0
    for b in bodies:
        tokens = approx_tokens(render_prompt(b))
        common = 0
        for x, y in zip(tokens, cached, strict=False):
            if x != y:
                break
            common += 1
        common = min(common, max(0, len(tokens) - 1))
        sent += len(tokens)
        evaluated_n += len(tokens) - common
        cached = tokens
    return sent, evaluated_n


def run(*, turn_close: bool, explore: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CERVEAU_CONFIG"] = str(Path(tmp) / "config.toml")
        ws = Path(tmp) / "ws"
        (ws / "src").mkdir(parents=True)
        for i in range(FILES):
            (ws / "src" / f"f{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n" * 20)
        flags = {"turn_close": turn_close, "delegate": explore}
        settings = load_settings(ws, flags=flags, environ={}, user_config=ws / "none.toml")
        entries = {"responses": script(turn_close=turn_close, explore=explore)}
        with ScriptedServer(entries, n_ctx=65536) as srv:  # room: no compaction in any run
            s = build_session(
                settings, bus=Emitter(), approver=ApproveAll(), provider=LlamaProvider(srv.url)
            )
            t0 = time.perf_counter()
            reasons: list[str] = []
            try:
                for t in range(TURNS):
                    out = s.engine.run(f"turn {t}: read src/ and write out{t}.txt")
                    reasons.append(out.reason)
                    s.engine.settle()  # turn close runs after the turn: count it in this turn
            finally:
                s.close()
            took = time.perf_counter() - t0
            bodies = list(srv.requests)
    sent, ev = evaluated(bodies)
    return {"requests": len(bodies), "sent": sent, "evaluated": ev, "s": took, "ends": reasons}


def main() -> None:
    rows = [
        ("baseline (both off)", run(turn_close=False, explore=False)),
        ("turn_close on", run(turn_close=True, explore=False)),
        ("delegate on (explore)", run(turn_close=False, explore=True)),
    ]
    base = rows[0][1]
    print(f"{TURNS} turns, {FILES} file reads each, scripted server (approximate tokens)")
    print(
        f"{'config':24} {'requests':>8} {'sent':>9} {'evaluated':>10} {'x base':>7} {'wall s':>7}"
    )
    for name, r in rows:
        ratio = r["evaluated"] / base["evaluated"] if base["evaluated"] else 0.0
        print(
            f"{name:24} {r['requests']:8d} {r['sent']:9d} {r['evaluated']:10d} "
            f"{ratio:7.2f} {r['s']:7.2f}  {','.join(sorted(set(r['ends'])))}"
        )


if __name__ == "__main__":
    main()
