"""What turn close and delegation (`explore`) cost, and what they buy, on the REAL llama-server:
should either be on by default (issue 22, then issue 36)? Figures: benchmarks/README.md.

    .venv/bin/python benchmarks/defaults_cost.py --only short   # the cached stack, SmolLM2-135M
    .venv/bin/python benchmarks/defaults_cost.py --only long    # --long-turns 6 --long-n-ctx 2048
    .venv/bin/python benchmarks/defaults_cost.py --only recall
    .venv/bin/python benchmarks/defaults_cost.py --configs off,tc-after   # some configurations

(1) Cost. The same scripted work (the scripted server decides what the model does, so every
    configuration does the same work) through the cache probe (testing/cache_probe.py): each
    request is first replayed to the real server, whose `prompt_n` (tokens it evaluated) and
    `cache_n` (tokens it reused) are recorded. Two workloads: a short one that never compacts
    (3 turns of 3 file reads and a write, n_ctx 8,192) and a compacting one (6 turns on n_ctx
    2,048; the brief replaces summaries, so that no summary's generation is counted). For each:
    both off; turn close with the old request shape ("before": the system message, the last 12
    messages, no tools) and the new ("after": the cached conversation plus one instruction);
    explore with the old child ("before": three tools sent, the parent's slot taken) and the new
    (the parent's tools sent, its slot set aside and restored). Printed: all evaluated tokens but
    the first request's, the ratio to both-off, turn close's evaluated tokens per distill, and the
    parent's: its evaluated tokens, its re-read after each explore, its window at the end.
(2) Benefit of turn close. A session does the scripted work (it reads service.toml, which says
    the port), the REAL model answers the distill; then a NEW session on the real model alone is
    asked the port. Printed: notes stored, whether they were recalled, and whether the answer
    used them; the same with turn close off as the control. The benefit of explore is (1)'s
    parent column: the parent tokens its child's bounded answer saved.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cerveau_tui.bus import Emitter, Recorder  # noqa: E402
from cerveau_tui.config import load_settings  # noqa: E402
from cerveau_tui.loop.approver import ApproveAll  # noqa: E402
from cerveau_tui.memory.turn_close import TurnCloseHook, _the_models_view  # noqa: E402
from cerveau_tui.protocol import EventType  # noqa: E402
from cerveau_tui.provider.llama import LlamaProvider  # noqa: E402
from cerveau_tui.session import build_session  # noqa: E402
from cerveau_tui.session.slot_keeper import SlotKeeper  # noqa: E402
from cerveau_tui.testing.cache_probe import CacheProbe, ProbeRecord  # noqa: E402
from cerveau_tui.testing.scripted_server import ScriptedServer  # noqa: E402
from cerveau_tui.tools.explore import ChildRegistry  # noqa: E402
from cerveau_tui.tools.registry import Registry  # noqa: E402

FILES = 3
BODY = "def f{i}(x):\n    # step {i}: adds {i} to x and logs it\n    return x + {i}\n" * 3
#: One place for every run: the system message names the workspace, so each configuration's
#: first request is the same prompt (and is left out of the totals: see figures()).
ROOT = Path(tempfile.gettempdir()) / f"cerveau-defaults-cost-{os.getpid()}"
PORT = "8731"
SERVICE = f'[service]\nname = "ledger"\nport = {PORT}\nworkers = 3\n'


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


DISTILL = {"content": json.dumps({"facts": ["src/ holds f0.py to f5.py"], "lessons": []})}


def script(turns: int, *, turn_close: bool, explore: bool) -> list[tuple[str, dict[str, Any]]]:
    """(who, reply) in the order the requests come: parent, child or distill."""
    out: list[tuple[str, dict[str, Any]]] = []
    for t in range(turns):
        if explore:  # the parent asks; the child reads; the parent writes from its answer
            out.append(
                ("parent", _call("explore", task=f"what do src/ files do? ({t})", path="src"))
            )
            out += [("child", _call("read_file", path=f"src/f{i}.py")) for i in range(FILES)]
            out.append(("child", {"content": "f0..f5 each add their number to x and log it."}))
        else:
            out += [("parent", _call("read_file", path=f"src/f{i}.py")) for i in range(FILES)]
        out.append(("parent", _call("write_file", path=f"out{t}.txt", content=f"summary {t}\n")))
        out.append(("parent", {"content": f"turn {t} done"}))
        if turn_close:
            out.append(("distill", DISTILL))
    return out


@contextlib.contextmanager
def before_shapes(turn_close: bool, explore: bool) -> Iterator[None]:
    """The request shapes before issue 36, put back for the comparison: a distill from the last
    12 messages with no tools; a child sending its three tools on the parent's slot."""
    saved = (TurnCloseHook.distill, ChildRegistry.schemas, SlotKeeper.aside)
    if turn_close:
        TurnCloseHook.distill = lambda self, ctx: self._distill_view(  # type: ignore[method-assign]
            _the_models_view(ctx.history), ctx.system
        )
    if explore:
        ChildRegistry.schemas = Registry.schemas  # type: ignore[method-assign]
        SlotKeeper.aside = lambda self: contextlib.nullcontext()  # type: ignore[method-assign]
    try:
        yield
    finally:
        TurnCloseHook.distill, ChildRegistry.schemas, SlotKeeper.aside = saved  # type: ignore[method-assign]


def _workspace() -> Path:
    import shutil

    shutil.rmtree(ROOT, ignore_errors=True)
    ws = ROOT / "ws"
    (ws / "src").mkdir(parents=True)
    os.environ["CERVEAU_CONFIG"] = str(ROOT / "config.toml")
    for i in range(FILES):
        (ws / "src" / f"f{i}.py").write_text(BODY.format(i=i))
    (ws / "service.toml").write_text(SERVICE)
    return ws


def run(
    real_url: str, turns: int, *, turn_close: bool, explore: bool, before: bool
) -> dict[str, Any]:
    roles = script(turns, turn_close=turn_close, explore=explore)
    with before_shapes(turn_close and before, explore and before):
        ws = _workspace()
        env = {
            "CERVEAU_CONTEXT__SUMMARISE": "false",
            "CERVEAU_DONE__GATE": '"off"',
            "CERVEAU_LIMITS__MAX_ITERATIONS": "30",
        }
        flags = {"turn_close": turn_close, "delegate": explore}
        settings = load_settings(ws, flags=flags, environ=env, user_config=ws / "none.toml")
        bus = Emitter()
        rec = Recorder(bus)
        entries = {"responses": [r for _, r in roles]}
        with ScriptedServer(entries, n_ctx=1 << 20) as srv, CacheProbe(real_url, srv.url) as probe:
            s = build_session(
                settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(probe.url)
            )
            t0 = time.perf_counter()
            ends = []
            try:
                for t in range(turns):
                    ends.append(s.engine.run(f"turn {t}: read src/ and write out{t}.txt").reason)
                    s.engine.settle()  # the distill runs after the turn: counted in this turn
            finally:
                s.close()
            took = time.perf_counter() - t0
            records = [r for r in probe.records if r.kind == "chat"]
    return {
        "records": list(zip([w for w, _ in roles], records, strict=False)),
        "ends": ends,
        "s": took,
        "compactions": len(rec.of(EventType.COMPACTED)),
        "notices": [e.payload["text"] for e in rec.of(EventType.NOTICE)],
    }


def figures(r: dict[str, Any]) -> dict[str, Any]:
    # The first request is the same prompt in every configuration (and found the server's
    # cache in whatever state the configuration before left it): out of the totals.
    pairs: list[tuple[str, ProbeRecord]] = r["records"][1:]
    parent = [x for w, x in pairs if w == "parent"]
    rereads = []  # the parent's first request after each child ran
    for i in range(1, len(pairs)):
        if pairs[i][0] == "parent" and pairs[i - 1][0] == "child":
            rereads.append(pairs[i][1].prompt_n)
    distills = [x.prompt_n for w, x in pairs if w == "distill"]
    return {
        "evaluated": sum(x.prompt_n for _, x in pairs),
        "parent": sum(x.prompt_n for x in parent),
        "child": sum(x.prompt_n for w, x in pairs if w == "child"),
        "distills": distills,
        "rereads": rereads,
        "window": parent[-1].prompt_n + parent[-1].cache_n if parent else 0,
    }


CONFIGS = {
    "off": ("both off", False, False, False),
    "tc-before": ("turn close, before", True, False, True),
    "tc-after": ("turn close, after", True, False, False),
    "ex-before": ("explore, before", False, True, True),
    "ex-after": ("explore, after", False, True, False),
}


def cost(real_url: str, name: str, turns: int, which: list[str]) -> None:
    configs = [CONFIGS[k] for k in which]
    print(f"--- {name}: {turns} turns, real llama-server through the cache probe")
    print(
        f"{'config':20} {'evaluated':>9} {'x off':>6} {'parent':>7} {'child':>6} "
        f"{'window':>6} {'compact':>7} {'wall s':>6}  per distill / parent re-read after explore"
    )
    base = 0
    for label, tc, ex, before in configs:
        r = run(real_url, turns, turn_close=tc, explore=ex, before=before)
        f = figures(r)
        base = base or f["evaluated"] or 1
        extra = ""
        if f["distills"]:
            extra = "distill " + ",".join(map(str, f["distills"]))
        if f["rereads"]:
            extra = "re-read " + ",".join(map(str, f["rereads"]))
        print(
            f"{label:20} {f['evaluated']:9,d} {f['evaluated'] / base:6.2f} {f['parent']:7,d} "
            f"{f['child']:6,d} {f['window']:6,d} {r['compactions']:7d} {r['s']:6.0f}  {extra}"
            f"  ends={','.join(sorted(set(r['ends'])))}"
        )


#: The real model's distill, bounded here: on a loaded 2-core machine the 135M model writes about
#: a token a second, and the product's 1,024-token cap would be a quarter of an hour per distill.
BENCH_DISTILL_TOKENS = 160


def recall(real_url: str) -> None:
    """Turn close's benefit: a fact of one session recalled and used by the next."""
    from cerveau_tui.memory import turn_close

    turn_close.DISTILL_MAX_TOKENS = BENCH_DISTILL_TOKENS
    print("--- recall: session 1 reads service.toml (scripted), the REAL model distils;")
    print("    session 2 (real model alone, 3 rounds of 64 tokens) is asked the port")
    for on in (True, False):
        print(_recall_once(real_url, on), flush=True)


def _recall_once(real_url: str, on: bool) -> str:
    ws = _workspace()
    env = {"CERVEAU_DONE__GATE": '"off"', "CERVEAU_TEMPERATURE": "0"}
    settings = load_settings(ws, flags={"turn_close": on}, environ=env, user_config=ws / "n")
    work = {
        "responses": [
            _call("read_file", path="service.toml"),
            _call("write_file", path="NOTES.md", content="the ledger service\n"),
            {"content": "The ledger service is configured in service.toml."},
        ]
    }
    bus = Emitter()
    rec = Recorder(bus)
    real = LlamaProvider(real_url)
    with ScriptedServer(work, n_ctx=1 << 20) as srv, CacheProbe(real_url, srv.url) as p:
        s = build_session(settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(p.url))
        for h in s.engine.hooks:
            if isinstance(h, TurnCloseHook):
                h.provider = real  # the real model answers the distill, on the real cache
        s.engine.run("Read service.toml, then write NOTES.md about the service.")
        s.engine.settle()
        s.close()
    stored = [
        e.payload["text"] for e in rec.of(EventType.NOTICE) if "remember" in e.payload["text"]
    ]
    env2 = {**env, "CERVEAU_LIMITS__MAX_ITERATIONS": "3", "CERVEAU_MAX_TOKENS": "64"}
    settings2 = load_settings(ws, flags={"turn_close": on}, environ=env2, user_config=ws / "n")
    bus2 = Emitter()
    rec2 = Recorder(bus2)
    s2 = build_session(settings2, bus=bus2, approver=ApproveAll(), provider=real)
    out = s2.engine.run("Which port does the ledger service listen on? Give the number.")
    s2.close()
    recalled = any(PORT in e.payload["text"] for e in rec2.of(EventType.REMINDER))
    reads = [e for e in rec2.of(EventType.TOOL_CALL) if e.payload["name"] == "read_file"]
    return (
        f"turn close {'on ' if on else 'off'}: notes {stored or 'none'}; "
        f"recalled with the port: {recalled}; answer names {PORT}: "
        f"{bool(re.search(PORT, out.message or ''))}; read_file calls {len(reads)}; "
        f"answer {(out.message or '')[:80]!r}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", help="a running llama-server (one slot, a slot save path)")
    ap.add_argument("--only", choices=("short", "long", "recall"), action="append")
    ap.add_argument("--short-turns", type=int, default=3)
    ap.add_argument("--long-turns", type=int, default=6)
    ap.add_argument("--long-n-ctx", type=int, default=2048)
    ap.add_argument("--configs", default=",".join(CONFIGS), help="of: " + ", ".join(CONFIGS))
    args = ap.parse_args()
    only = set(args.only or ("short", "long", "recall"))
    which = args.configs.split(",")
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import locate
    from cerveau_tui.stack.server import managed_for

    @contextlib.contextmanager
    def server(n_ctx: int) -> Iterator[str]:
        if args.server:
            yield str(args.server)
            return
        loc = locate(stack_paths())
        assert loc.binary is not None and loc.model is not None, "run `cerveau stack provision`"
        srv = managed_for(stack_paths(), loc.binary, loc.model, n_ctx=n_ctx)
        srv.start(timeout_s=300.0)
        try:
            yield srv.url
        finally:
            srv.stop()

    if "short" in only:
        with server(8192) as url:
            short = f"short, never compacts (n_ctx 8,192), {FILES} reads a turn"
            cost(url, short, args.short_turns, which)
    if "long" in only:
        with server(args.long_n_ctx) as url:
            cost(url, f"long, compacts (n_ctx {args.long_n_ctx:,})", args.long_turns, which)
    if "recall" in only:
        with server(8192) as url:
            recall(url)


if __name__ == "__main__":
    main()
