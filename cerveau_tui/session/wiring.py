"""Which mechanisms join a session's turns, and how each is built from Settings.

Apart from the session's own code so each mechanism's wiring is a few lines here, and the session
module stays the order of construction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from ..config import Settings
from ..hooks import Hook
from ..plan.state import PlanState
from ..workspace.fingerprint.fingerprinter import Fingerprinter
from ..workspace.restore.store import BlobStore


def reserved_ports(settings: Settings, server_url: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for name, url in [
        ("LLM server (llama.cpp)", server_url),
        *[(s.name, s.url) for s in settings.services],
    ]:
        u = urlparse(url if "://" in url else f"http://{url}")
        if u.port:
            out[u.port] = name
    return out


def plan_tools() -> list[Any]:
    from ..tools.plan_tools import CommitPlan, UpdatePlan

    return [CommitPlan(), UpdatePlan()]


def hooks(
    settings: Settings,
    url: str,
    runner: Any,
    fp: Fingerprinter,
    store: BlobStore,
    plan: PlanState,
    props: Any = None,
) -> list[Hook]:
    from ..loop.guards.turn_hooks import BreakerHook, PortHook, ProgressHook
    from ..plan.hook import PlanHook

    lim = settings.limits
    hooks: list[Hook] = [
        PortHook(
            reserved_ports(settings, url),
            services=[
                ("LLM server (llama.cpp)", url),
                *[(x.name, x.url) for x in settings.services],
            ],
        ),
        BreakerHook(lim.breaker_threshold),
        ProgressHook(fp.digest_soon, lim.progress_stall_limit),  # no wait for the first walk
        PlanHook(settings.workspace, state=plan, fingerprinter=fp),
    ]
    # The seal always (protected paths and the verification seal, criteria or not); the gate
    # with the written criteria or the gate resolved for this run (inert without either). They
    # share one SealState. `props` gives R2 the server's reasoning switch.
    from ..adapters.registry import resolve_stack_for_run
    from ..done.sandboxed import proof_runner
    from ..done.wire import done_hooks

    # The detected check proved runnable where it will run (issue 33: "No module named pytest"
    # was counted "unmet, 0 errors" every turn); one that cannot run is said, not offered.
    proof = proof_runner(runner, settings.workspace, settings.sandbox)
    stack = resolve_stack_for_run(settings.workspace, settings, run=proof)
    # The fingerprint: an unchanged tree is not tested again (done/memory.py); no wait for the
    # first walk (a pending digest never keys a verdict).
    hooks += done_hooks(
        settings, runner, store=store, stack=stack, props=props, fingerprint=fp.digest_soon
    )
    # AGENTS.md and the skills index in the prefix; changed files and the budget as reminders.
    from ..reminders import reminder_hooks

    hooks += reminder_hooks(settings, fp)
    # Lessons first: the gate's red precheck (its on_turn_start) must reach a listening miner.
    from ..adapters.registry import AdapterRegistry
    from ..memory.lessons_hook import LessonsHook

    hooks.insert(0, LessonsHook(settings.workspace, stack=lambda ws: AdapterRegistry()(ws).name))
    return hooks


def token_counter(provider: Any, props: Any) -> tuple[Callable[[str], int], str]:
    # TokenCounter degrades by itself (GGUF BPE, then /tokenize, then a labelled estimate).
    from ..context.tokens import TokenCounter

    counter = TokenCounter(provider, getattr(props, "model_path", None))
    return counter.count, counter.source


def rewinder(
    engine: Any, journal: Any, log: Any, store: Any, fp: Any, plan: Any, bus: Any, stored: Any
) -> Any:
    """The session's restore points (session/rewind/), subscribed to the bus last: a point is
    taken after the log has the event that caused it. A resumed session reads its points back,
    and the store is collected past its bounds (workspace/checkpoint_gc.py) in the background."""
    from .rewind import Rewinder
    from .rewind.points import Points, read_points

    points = read_points(engine.workspace, log.session_id, store) if stored else Points(store)
    # A forward after a resume: the conversation before the rewind, as the log folded it.
    before = stored.rewound[-1].conversation if stored is not None and stored.rewound else None
    rw = Rewinder(
        store,
        fp,
        log,
        points=points,
        engine=engine,
        journal=journal,
        plan=plan,
        bus=bus,
        before=before,
    )
    import threading

    def collect() -> None:
        from .rewind.gc import collect as gc

        bounds = engine.settings.rewind
        try:
            rw.warm()  # the store in step before the first turn: its point then costs O(changed)
            gc(engine.workspace, max_age_days=bounds.max_age_days, max_mb=bounds.max_mb)
        except Exception:  # noqa: BLE001 - a store not collected now is collected next time
            pass

    threading.Thread(target=collect, name="rewind-gc", daemon=True).start()
    return rw
