"""How a session is built: from Settings to its parts, in steps that `parts` runs in order.

Each step is a function of what the steps before it made and returns its part: the model server
(`reach_model`), the boundary (boundary.py), the workspace's state, the hooks, the tools, the log
(resume.py), the engine, what is said at the start (`announce`), the rewinder. The only place
that knows every mechanism; the engine itself imports none of them.

A step that fails takes with it what the steps before it started (`started`): a session that
could not open (its log held by another cerveau, a resume that failed) had left a llama-server,
the HTTP client and the memory databases held, and the palette's next pick found a second server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from .. import protocol as P
from ..bus import Emitter
from ..config import Settings
from ..hooks import Hook
from ..loop.approver import Approver
from ..loop.engine import Engine
from ..loop.state import EngineState
from ..plan.persist import SessionLog
from ..plan.state import PlanState
from ..provider.errors import public_url
from ..provider.llama import LlamaProvider
from ..provider.types import Provider, ServerProps
from ..reminders import skill_book
from ..sandbox.base import Runner
from ..sandbox.protect import keep_out_of_git, require_writable_state_dir
from ..tools.registry import Registry, default_tools
from ..workspace.fingerprint.fingerprinter import Fingerprinter
from ..workspace.restore.store import BlobStore
from . import boundary, slot_keeper
from . import resume as resume_
from .journal import Journal
from .rewind import Rewinder
from .stored import StoredSession

if TYPE_CHECKING:
    from ..memory.turn_close import TurnCloseHook
    from ..stack.server import ManagedServer

Progress = Callable[[str, float | None, str], None]


@dataclass(frozen=True)
class Model:
    """The model server as this session reaches it."""

    provider: Provider  # behind a SlotKeeper when the server keeps slots (slot_keeper.py)
    url: str
    managed: ManagedServer | None  # when we started llama-server ourselves
    props: ServerProps | None
    name: str  # the GGUF the server loaded, else the configured name
    n_ctx: int
    count_tokens: Callable[[str], int]
    token_source: str  # how tokens are counted: the GGUF's own BPE, /tokenize, or an estimate


@dataclass(frozen=True)
class Parts:
    """What a session is made of, each part built once by the steps; the Session holds them and
    swaps none (discussion mode refuses calls at dispatch, loop/narrow.py)."""

    settings: Settings
    bus: Emitter
    engine: Engine
    model: Model
    sandbox_status: dict[str, Any]  # the self-check's report
    registry: Registry  # every tool of the session
    log: SessionLog
    journal: Journal  # what the log holds beyond events
    resumed: StoredSession | None  # when this session continues one
    rewinder: Rewinder  # restore points and rewinds (session/rewind/)


def parts(
    settings: Settings,
    bus: Emitter,
    approver: Approver,
    progress: Progress | None,
    provider: Provider | None,
    resume: str | None,
) -> Parts:
    # Never bound writable into a sandbox, nor its .cerveau made: a folder other users share.
    from ..workspace.private import require_private

    require_private(settings.workspace)
    # First: a read-only workspace failed after the server had loaded, on a raw OSError.
    require_writable_state_dir(settings.workspace)
    with ExitStack() as started:
        model = reach_model(settings, bus, progress, provider, started)
        bound = boundary.parts(settings, bus, started)
        fp, store, plan = workspace_state(settings, bus, started)
        joined = hooks(settings, model, bound.runner, fp, store, plan, bus, started)
        registry = tools(settings, joined)
        # Resuming keeps the session's id and appends to its own log; the rebuilt state goes
        # back once the session is announced. Opened before the engine, so the engine is built
        # once with what the log must hear (its state's history) and nothing reaches back into
        # it afterwards.
        log, stored = resume_.open_session_log(settings, bus, resume)
        started.callback(log.close)
        state = EngineState()
        journal = Journal(log, state, settings.workspace)
        bound.policy.listener = journal  # each session grant and revoke, written as it happens
        engine = Engine(
            provider=model.provider,
            registry=registry,  # discussion mode refuses calls (loop/narrow.py): same tools sent
            bus=bus,
            settings=settings,
            approver=approver,
            runner=bound.runner,
            policy=bound.policy,
            hooks=joined,
            n_ctx=model.n_ctx,
            model=model.name,
            count_tokens=model.count_tokens,
            fingerprinter=fp,
            store=store,
            plan=plan,
            delegation=settings.delegate,
            state=state,
        )
        announce(settings, bus, model, bound.status, store, log)
        if stored is not None:
            resume_.restore(engine, journal, stored, plan, bus)
        rw = rewinder(engine, journal, log, store, fp, plan, bus, stored)
        started.pop_all()  # built: from now on Session.close lets them go
    return Parts(settings, bus, engine, model, bound.status, registry, log, journal, stored, rw)


def reach_model(
    settings: Settings,
    bus: Emitter,
    progress: Progress | None,
    provider: Provider | None,
    started: ExitStack,
) -> Model:
    """The model server: the provider given, else the configured URL, else a llama-server we
    start (its progress on the bus and to `progress`); what it says of itself (props), and its
    slot kept across sessions for an instant resume."""
    managed = None
    if provider is None:
        if settings.server_url:
            url = settings.server_url
        else:
            from ..stack.server import ensure_server

            def stack_progress(stage: str, fraction: float | None, line: str) -> None:
                bus.emit(P.StackProgress(stage=stage, fraction=fraction, line=line))
                if progress:
                    progress(stage, fraction, line)

            url, managed = ensure_server(settings, stack_progress)
            if managed is not None:
                started.callback(managed.stop)
        provider = LlamaProvider(
            url,
            model=settings.model_name,
            action_mode=settings.action_mode,
            temperature=settings.temperature,
            timeout_s=settings.request_timeout_s,
            session_header=settings.session_header,
            session_key=lambda: bus.session_id,  # read per request: a resume sets it later
            n_ctx=settings.n_ctx,  # asked of Ollama when it states no window (provider/ollama.py)
        )
    else:
        url = provider.base_url
    started.callback(provider.close)
    props = provider.props()
    kept = slot_keeper.keep_slots(provider, bus, settings, props)  # instant resume
    if kept is not provider:
        started.callback(kept.close)  # saves the slot, then closes the provider it keeps
    # TokenCounter degrades by itself (GGUF BPE, then /tokenize, then a labelled estimate).
    from ..context.tokens import TokenCounter

    counter = TokenCounter(kept, props.model_path if props else None)
    return Model(
        provider=kept,
        url=url,
        managed=managed,
        props=props,
        name=(props.model_path if props else None) or settings.model_name or "",
        n_ctx=(props.n_ctx if props and props.n_ctx else None) or settings.n_ctx,
        count_tokens=counter.count,
        token_source=counter.source,
    )


def workspace_state(
    settings: Settings, bus: Emitter, started: ExitStack
) -> tuple[Fingerprinter, BlobStore, PlanState]:
    """The fingerprint, the content store, and the session's plan ledger."""
    # Kept current by the kernel's change set (inotify), its first walk in the background with
    # its progress on the status line: the first prompt does not wait for a large tree.
    fp = Fingerprinter(settings.workspace, watch=True)
    fp.start(lambda stage, fraction, line: bus.emit(P.StackProgress(stage=stage, line=line)))
    started.callback(fp.close)  # its inotify watch (fs.inotify.max_user_instances)
    store = BlobStore(settings.workspace)
    # The plan tools (ToolContext.plan), the PlanHook and report() hold this object; it follows
    # the bus from now on, and a resume restores it (resume.py).
    plan = PlanState(workspace=settings.workspace, fingerprinter=fp)
    started.callback(bus.subscribe(plan))
    return fp, store, plan


def reserved_ports(services: list[tuple[str, str]]) -> dict[int, str]:
    """The explicit port of each (name, URL), for PortHook to keep a command from binding it. Not
    guards/ports.py's reading, which gives a URL without one its scheme's (a remote https
    server's 443 is no port of this machine's)."""
    ports = {
        urlparse(url if "://" in url else f"http://{url}").port: name for name, url in services
    }
    return {port: name for port, name in ports.items() if port}


def hooks(
    settings: Settings,
    model: Model,
    runner: Runner,
    fp: Fingerprinter,
    store: BlobStore,
    plan: PlanState,
    bus: Emitter,
    started: ExitStack,
) -> list[Hook]:
    """The mechanisms that join the turns at the loop's hook points, in their order."""
    from ..loop.guards.turn_hooks import BreakerHook, PortHook, ProgressHook
    from ..plan.hook import PlanHook

    services = [
        ("LLM server (llama.cpp)", model.url),
        *[(x.name, x.url) for x in settings.services],
    ]
    lim = settings.limits
    joined: list[Hook] = [
        PortHook(reserved_ports(services), services=services),
        BreakerHook(lim.breaker_threshold),
        ProgressHook(fp.digest_soon, lim.progress_stall_limit),  # no wait for the first walk
        PlanHook(settings.workspace, state=plan, fingerprinter=fp),
    ]
    started.callback(_close_all, joined)  # as the list is when a later step fails
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
    joined += done_hooks(
        settings, runner, store=store, stack=stack, props=model.props, fingerprint=fp.digest_soon
    )
    # AGENTS.md and the skills index in the prefix; changed files and the budget as reminders.
    from ..reminders import reminder_hooks

    joined += reminder_hooks(settings, fp)
    # MCP servers, started inside the sandbox; their index in the prefix (cerveau_tui/mcp/).
    from ..mcp.hook import mcp_hooks

    joined += mcp_hooks(settings, runner, boundary.denied_reads(settings))
    # Lessons first: the gate's red precheck (its on_turn_start) must reach a listening miner.
    from ..adapters.registry import AdapterRegistry
    from ..memory.lessons_hook import LessonsHook

    joined.insert(0, LessonsHook(settings.workspace, stack=lambda ws: AdapterRegistry()(ws).name))
    if settings.turn_close:
        joined.append(turn_close_hook(settings, bus, model.provider))
    # The person's own hooks, last: their turn_end runs once the done gate accepted the answer.
    from ..person_hooks import person_hooks

    mine = person_hooks(settings, runner, bus)
    if mine is not None:
        joined.append(mine)
    return joined


def turn_close_hook(settings: Settings, bus: Emitter, provider: Provider) -> TurnCloseHook:
    """Turn close (memory/turn_close.py), at wiring or when the person switches it on."""
    from ..memory.store import MemoryStore
    from ..memory.turn_close import TurnCloseHook

    memory = MemoryStore(settings.workspace)
    for moved in memory.moved_aside:
        boundary.boundary_notice(bus, str(moved))
    return TurnCloseHook(provider, memory)


def _close_all(hooks: list[Hook]) -> None:
    for h in hooks:
        h.close()


def tools(settings: Settings, hooks: list[Hook]) -> Registry:
    """Every tool of the session; discussion mode lets DISCUSS_TOOLS of them run."""
    from ..tools.plan_tools import CommitPlan, UpdatePlan

    registry = Registry([*default_tools(), CommitPlan(), UpdatePlan()])
    if settings.delegate:
        from ..tools.explore import Explore

        registry.add(Explore())
    skills = skill_book(hooks)
    if skills is not None:  # offered only when there is a skill to load
        from ..tools.skill import LoadSkill

        registry.add(LoadSkill(skills))
    from ..mcp.hook import mcp_tools

    for tool in mcp_tools(hooks):  # mcp_describe and mcp_call, when a server has tools
        registry.add(tool)
    return registry


def announce(
    settings: Settings,
    bus: Emitter,
    model: Model,
    sandbox_status: dict[str, Any],
    store: BlobStore,
    log: SessionLog,
) -> None:
    """SessionStarted, then what the boundary says at the start: the workspace config held back
    or applied, and the harness's own folders a planted link had replaced (moved aside)."""
    keep_out_of_git(settings.workspace)  # the log made .cerveau/ (if it was not there)
    protection = boundary.protection(settings)
    bus.emit(
        P.SessionStarted(
            server_url=public_url(model.url),  # the stream and the log: no user:password
            n_ctx=model.n_ctx,
            sandbox=sandbox_status,
            model=model.name.split("/")[-1],
            mode=settings.sandbox,
            approval=settings.approval,
            workspace_config=protection,
            held_back=protection["held_back"],
        ),
    )
    for text in boundary.protection_notices(protection):
        boundary.boundary_notice(bus, text)
    for moved in [*store.moved_aside, *log.moved_aside]:
        boundary.boundary_notice(bus, str(moved))
    store.moved_aside.clear()


def rewinder(
    engine: Engine,
    journal: Journal,
    log: SessionLog,
    store: BlobStore,
    fp: Fingerprinter,
    plan: PlanState,
    bus: Emitter,
    stored: StoredSession | None,
) -> Rewinder:
    """The session's restore points (session/rewind/), subscribed to the bus last: a point is
    taken after the log has the event that caused it. A resumed session reads its points back,
    and the store is collected past its bounds (rewind/gc.py) in the background."""
    from .rewind.points import Points, read_points

    points = read_points(engine.workspace, log.session_id, store) if stored else Points(store)
    # A forward after a resume: the conversation before the rewind, as the log folded it.
    before = stored.rewound[-1].conversation if stored is not None and stored.rewound else None
    rw = Rewinder(
        store, fp, log, points=points, engine=engine, journal=journal, plan=plan, bus=bus,
        before=before,
    )  # fmt: skip

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
