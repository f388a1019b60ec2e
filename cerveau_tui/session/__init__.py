"""Wiring: from Settings to a running session (provider, tools, boundary, hooks, engine, log).

The only place that knows every mechanism; the engine itself imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import protocol as P
from ..bus import Emitter
from ..config import Settings
from ..history import Message, Origin
from ..hooks import Hook
from ..loop.approver import Approver, DenyAll
from ..loop.engine import Engine
from ..loop.state import EngineState
from ..plan.models import PlanReport
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
from ..workspace.undo import UndoLog
from . import boundary, slot_keeper, wiring
from . import resume as resume_
from .journal import Journal
from .rewind import Rewinder
from .stored import StoredSession

if TYPE_CHECKING:
    from ..stack.server import ManagedServer

Progress = Callable[[str, float | None, str], None]

#: What a discussion turn may use: look, and commit a plan. Structural: the other tools are absent.
DISCUSS_TOOLS = ("read_file", "list_files", "search", "commit_plan", "load_skill")


@dataclass
class Session:
    settings: Settings
    bus: Emitter
    engine: Engine
    approver: Approver
    server_url: str
    managed: ManagedServer | None = None  # when we started llama-server ourselves
    props: ServerProps | None = None
    sandbox_status: dict[str, Any] = field(default_factory=dict)  # the self-check's report
    token_source: str = "estimate"
    log: SessionLog | None = None
    full_registry: Registry | None = None  # the registry outside discussion mode
    journal: Journal | None = None  # what the log holds beyond events
    resumed: StoredSession | None = None  # when this session continues one
    rewinder: Rewinder | None = None  # restore points and rewinds (session/rewind/)

    def transcript(self) -> list[Any]:
        """The stored events of the resumed session for the UI to redraw (messages, tool calls
        and results, plan events, usage, turn ends; the last turns of a long one): [] when fresh."""
        return self.resumed.transcript() if self.resumed is not None else []

    def status(self) -> dict[str, Any]:
        props = self.props
        return {
            "server_url": public_url(self.server_url),  # shown and logged: no user:password
            "managed": self.managed is not None,
            "model": (
                (props.model_path if props else None) or self.settings.model_name or ""
            ).split("/")[-1],
            "n_ctx": self.engine.n_ctx,
            "build_info": props.build_info if props else None,
            "action_mode": _action_mode(self.engine.provider, self.settings.action_mode),
            "sandbox_backend": self.sandbox_status.get("backend", "none"),
            "sandbox_enforced": bool(self.sandbox_status.get("enforced", False)),
            "sandbox_gaps": len(self.sandbox_status.get("gaps") or []),
            "tokenizer": self.token_source,
        }

    def report(self) -> PlanReport:
        """The plan report: the session's plan ledger reconciled with the disk, the same object
        the model's guidance, the resume brief, the views and `cerveau report` are served from."""
        if self.engine.plan is None:
            return PlanReport()
        return self.engine.plan.reconciled()

    def set_network(self, on: bool) -> None:
        """Grant or withdraw the network for the rest of the session. The policy looks the grant
        up per call, so this takes effect even while a turn runs."""
        self.settings.network = on
        self.bus.emit(
            P.NoticePayload(
                text="network granted for this session (any host)"
                if on
                else "network withdrawn for this session"
            ),
        )

    def set_discuss(self, on: bool) -> None:
        """Discussion mode: the model may only read and commit a plan. Structural, as at start-up:
        the other tools leave the registry (and come back when it ends)."""
        if self.full_registry is None:
            self.full_registry = self.engine.registry
        self.settings.discuss = on
        self.engine.registry = self.full_registry.only(*DISCUSS_TOOLS) if on else self.full_registry
        self.bus.emit(
            P.NoticePayload(
                text="discussion mode: read and plan only"
                if on
                else "autopilot: the agent may change files again"
            ),
        )

    def gate_offer(self) -> str | None:
        """The detected check to offer as the done gate, once per workspace: its command while
        `[done] gate` is undecided and no criteria are written; None otherwise."""
        from ..adapters.registry import resolve_stack_for_run

        # Proved unable to run at wiring (issue 33): not offered; the gate's notice says why.
        if any(getattr(h, "cannot_run", "") for h in self.engine.hooks):
            return None
        stack = resolve_stack_for_run(self.settings.workspace, self.settings)
        return stack.detected if stack.undecided else None

    def set_gate(self, value: str) -> None:
        """The person's answer ("auto", "off", or a command): saved as `[done] gate` in the
        workspace's .cerveau/config.toml (done/gate_setting.py says how) and put in force for
        this session's next turn. ConfigError, with the reason, when it cannot be saved."""
        from ..adapters.registry import resolve_stack_for_run
        from ..done.detected import gate_done_set
        from ..done.gate_setting import check_gate_value, save_gate
        from ..done.wire import retarget

        value = check_gate_value(value)
        save_gate(self.settings.workspace, value)
        self.settings.done.gate = value
        stack = resolve_stack_for_run(self.settings.workspace, self.settings)
        retarget(self.engine.hooks, gate_done_set(self.settings, stack))
        self.bus.emit(
            P.NoticePayload(
                text=f"done gate: {stack.command or 'none'} ({stack.why}); saved in config.toml"
            ),
        )

    def close(self) -> None:
        self.engine.interrupt()
        self.engine.close()
        if self.engine.fingerprinter is not None:
            self.engine.fingerprinter.close()  # its inotify watch (fs.inotify.max_user_instances)
        if self.journal is not None:
            self.journal.flush()
        if self.log is not None:
            self.log.close()  # fsync'd, and the lock released: the session can be resumed
        self.engine.provider.close()
        if self.managed is not None:
            self.managed.stop()
            self.managed = None

    def session_grants(self) -> list[tuple[str, str]]:
        """(scope_key, scope spelled out) for each "approve for this session" still in force:
        the palette lists them so the person can take one back. The UI asks here, never the
        engine's policy: the session is the UI's one handle on what the engine was built with."""
        policy = self.engine.policy
        return policy.session_scopes() if policy is not None else []

    def notes(self) -> list[Any]:
        """The remembered notes (memory.store.Note: id, kind, text, seen, created, updated) that
        the next session will be reminded of; [] when turn close is off."""
        store = self._memory()
        return store.notes() if store is not None else []

    def forget_note(self, note_id: int) -> bool:
        """Forget one note for good (the palette's "forget"). False if there was none."""
        store = self._memory()
        return store.forget(note_id) if store is not None else False

    def _memory(self) -> Any:
        from ..memory.turn_close import TurnCloseHook

        hook = next((h for h in self.engine.hooks if isinstance(h, TurnCloseHook)), None)
        return hook.store if hook is not None else None

    def lessons(self) -> list[Any]:
        """The stored lessons (memory.lessons.Lesson: id, kind, trigger, fix, text, seen) a later
        session is reminded of when relevant; the palette lists them."""
        hook = self._lessons()
        return hook.lessons() if hook is not None else []

    def forget_lesson(self, lesson_id: int) -> bool:
        """Forget one lesson for good. False if there was none."""
        hook = self._lessons()
        return hook.forget(lesson_id) if hook is not None else False

    def _lessons(self) -> Any:
        from ..memory.lessons_hook import LessonsHook

        return next((h for h in self.engine.hooks if isinstance(h, LessonsHook)), None)

    def skills(self) -> list[tuple[str, str]]:
        """(name, description) of each skill the session read at its creation (the palette)."""
        book = skill_book(self.engine.hooks)
        return book.names() if book is not None else []

    def load_skill(self, name: str) -> bool:
        """The person loads a skill, between turns: its body enters the history as one marked
        user message, read by the model with the next request. False if there is none."""
        book = skill_book(self.engine.hooks)
        body = book.body(name) if book is not None else None
        if body is None:
            return False
        self.engine.history.append(
            Message.user(f"[skill {name.strip()}, loaded by the person]\n{body}", Origin.SKILL)
        )
        self.bus.emit(P.NoticePayload(text=f"skill {name.strip()} loaded for the next turn"))
        return True

    def revoke(self, scope_key: str) -> bool:
        """Take back a session grant: the next matching call asks again. False if none was held."""
        policy = self.engine.policy
        return policy is not None and policy.revoke(scope_key)

    def lasting_rules(self) -> list[tuple[str, str, str]]:
        """(scope_key, scope, "allow" | "deny") of the workspace's lasting rules (the palette)."""
        policy = self.engine.policy
        return policy.lasting_rules() if policy is not None else []

    def revoke_rule(self, scope_key: str) -> bool:
        """Take back a lasting rule, in this session and the next. False if there was none."""
        policy = self.engine.policy
        return policy is not None and policy.revoke_rule(scope_key)


def _action_mode(provider: Provider, configured: str) -> str:
    """What runs ("native" or "constrained"), not "auto": the header and doctor say the truth."""
    try:
        return provider.resolved_mode()
    except Exception:  # noqa: BLE001 - a status line must not fail on a flaky /props
        return configured


def build_session(
    settings: Settings,
    *,
    bus: Emitter | None = None,
    approver: Approver | None = None,
    progress: Progress | None = None,
    provider: Provider | None = None,
    resume: str | None = None,
) -> Session:
    """`resume`: None starts fresh; an id (or "" / "last": the latest) resumes that stored session
    in place: same id, its log appended to, its history, plan, grants and undo back (resume.py)."""
    # Never bound writable into a sandbox, nor its .cerveau made: a folder other users share.
    from ..workspace.private import require_private

    require_private(settings.workspace)
    # First: a read-only workspace failed after the server had loaded, on a raw OSError.
    require_writable_state_dir(settings.workspace)
    bus = bus or Emitter()
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
        provider = LlamaProvider(
            url,
            model=settings.model_name,
            action_mode=settings.action_mode,
            temperature=settings.temperature,
            timeout_s=settings.request_timeout_s,
            session_header=settings.session_header,
            session_key=lambda: bus.session_id,  # read per request: a resume sets it later
        )
    else:
        url = provider.base_url
    props = provider.props()
    n_ctx = (props.n_ctx if props and props.n_ctx else None) or settings.n_ctx
    provider = slot_keeper.keep_slots(provider, bus, settings, props)  # instant resume

    runner, sandbox_status = boundary.sandbox(settings)
    runner = boundary.guard_git(runner, settings, bus)
    boundary.sweep(settings, bus)
    policy = boundary.policy(settings, runner, sandbox_status)
    registry = Registry(default_tools() + wiring.plan_tools())
    if settings.delegate:
        from ..tools.explore import Explore

        registry.add(Explore())
    full_registry = registry
    if settings.discuss:
        registry = registry.only(*DISCUSS_TOOLS)
    # Kept current by the kernel's change set (inotify), its first walk in the background with
    # its progress on the status line: the first prompt does not wait for a large tree.
    fp = Fingerprinter(settings.workspace, watch=True)
    fp.start(lambda stage, fraction, line: bus.emit(P.StackProgress(stage=stage, line=line)))
    store = BlobStore(settings.workspace)
    # The session's plan ledger: the plan tools (ToolContext.plan), the PlanHook and report()
    # hold this object; it follows the bus from now on, and a resume restores it (resume.py).
    plan = PlanState(workspace=settings.workspace, fingerprinter=fp)
    bus.subscribe(plan)
    hooks = wiring.hooks(settings, url, runner, fp, store, plan, props)
    skills = skill_book(hooks)
    if skills is not None:  # offered only when there is a skill to load
        from ..tools.skill import LoadSkill

        full_registry.add(LoadSkill(skills))
        if registry is not full_registry:  # discussion mode: loading a skill only reads
            registry.add(LoadSkill(skills))
    if settings.turn_close and hasattr(provider, "complete_json"):
        from ..memory.store import MemoryStore
        from ..memory.turn_close import TurnCloseHook

        memory = MemoryStore(settings.workspace)
        for moved in memory.moved_aside:
            boundary.boundary_notice(bus, str(moved))
        hooks.append(TurnCloseHook(provider, memory))
    count, token_source = wiring.token_counter(provider, props)
    # Resuming keeps the session's id and appends to its own log; the rebuilt state goes back
    # once the session is announced (below). Opened before the engine, so the engine is built
    # once with what the log must hear (its state's history, the recorded policy, the undo
    # log's listener) and nothing reaches back into it afterwards.
    try:
        log, stored = resume_.open_session_log(settings, bus, resume)
    except BaseException:
        _abandon_parts(hooks, runner, provider, managed)
        raise
    state = EngineState()
    journal = Journal(log, state, settings.workspace)
    policy.listener = journal  # each session grant and revoke, written as it happens
    undo_log = UndoLog(store)
    undo_log.listener = journal.undo_changed
    engine = Engine(
        provider=provider,
        registry=registry,
        bus=bus,
        settings=settings,
        approver=approver or DenyAll(),
        runner=runner,
        policy=policy,
        hooks=hooks,
        n_ctx=n_ctx,
        model=(props.model_path if props else None) or settings.model_name or "",
        count_tokens=count,
        fingerprinter=fp,
        store=store,
        plan=plan,
        undo_log=undo_log,
        delegation=settings.delegate,
        state=state,
    )
    keep_out_of_git(settings.workspace)  # the log made .cerveau/ (if it was not there)
    protection = boundary.protection(settings)
    bus.emit(
        P.SessionStarted(
            server_url=public_url(url),  # the stream and the log: no user:password
            n_ctx=n_ctx,
            sandbox=sandbox_status,
            model=engine.model.split("/")[-1],
            mode=settings.sandbox,
            approval=settings.approval,
            workspace_config=protection,
            held_back=protection["held_back"],
        ),
    )
    for text in boundary.protection_notices(protection):
        boundary.boundary_notice(bus, text)
    for moved in [*store.moved_aside, *getattr(log, "moved_aside", [])]:
        boundary.boundary_notice(bus, str(moved))
    store.moved_aside.clear()
    if stored is not None:
        try:
            resume_.restore(engine, journal, stored, plan, bus)  # closes the log if it fails
        except BaseException:
            _abandon(engine, managed)
            raise
    rewinder = wiring.rewinder(engine, journal, log, store, fp, plan, bus, stored)
    return Session(
        settings,
        bus,
        engine,
        engine.approver,
        url,
        managed,
        props,
        sandbox_status,
        token_source,
        log,
        full_registry,
        journal,
        stored,
        rewinder,
    )


def _abandon_parts(
    hooks: list[Hook], runner: Runner, provider: Provider, managed: ManagedServer | None
) -> None:
    """The log could not be opened: no engine yet, so what was built for it goes by hand."""
    runner.kill_background()
    for h in hooks:
        h.close()
    provider.close()
    if managed is not None:
        managed.stop()


def _abandon(engine: Engine, managed: ManagedServer | None) -> None:
    """A session that could not open (its log held by another cerveau, a resume that failed):
    what was started for it goes, or the palette's next pick would find a second llama-server,
    the memory databases and the HTTP client still held by this one."""
    engine.close()
    engine.provider.close()
    if managed is not None:
        managed.stop()
