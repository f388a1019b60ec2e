"""The session: what a client (the TUI, the headless runner, a test) holds of a running one.

`build_session` makes its parts in steps (build.py) and the Session holds them, frozen: the
engine, the bus and the settings it was built with, its log and rewinder, and what the palette
asks of it (grants and rules, notes and lessons, skills, discussion mode, the done gate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import protocol as P
from ..bus import Emitter
from ..config import Settings
from ..history import Message, Origin
from ..loop.approver import Approver, DenyAll
from ..plan.models import PlanReport
from ..provider.errors import public_url
from ..provider.types import Provider
from ..reminders import skill_book
from . import build
from .build import Parts, Progress

if TYPE_CHECKING:
    from ..memory.lessons_hook import LessonsHook
    from ..memory.store import MemoryStore


class Session:
    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        # What its clients read by name; the rest through `parts`.
        self.engine, self.bus, self.settings = parts.engine, parts.bus, parts.settings
        self.log, self.rewinder = parts.log, parts.rewinder

    def transcript(self) -> list[Any]:
        """The stored events of the resumed session for the UI to redraw (messages, tool calls
        and results, plan events, usage, turn ends; the last turns of a long one): [] when fresh."""
        resumed = self.parts.resumed
        return resumed.transcript() if resumed is not None else []

    def status(self) -> dict[str, Any]:
        model, sandbox = self.parts.model, self.parts.sandbox_status
        return {
            "server_url": public_url(model.url),  # shown and logged: no user:password
            "managed": model.managed is not None,
            "model": model.name.split("/")[-1],
            "n_ctx": self.engine.n_ctx,
            "build_info": model.props.build_info if model.props else None,
            "action_mode": _action_mode(self.engine.provider, self.settings.action_mode),
            "sandbox_backend": sandbox.get("backend", "none"),
            "sandbox_enforced": bool(sandbox.get("enforced", False)),
            "sandbox_gaps": len(sandbox.get("gaps") or []),
            "tokenizer": model.token_source,
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

    def set_turn_close(self, on: bool) -> None:
        """Turn close (memory/turn_close.py) from the next turn's end on. Its hook is made when
        first switched on; the tools and the system message do not change."""
        from ..memory.turn_close import TurnCloseHook

        self.settings.turn_close = on
        hook = next((h for h in self.engine.hooks if isinstance(h, TurnCloseHook)), None)
        if on and hook is None:
            hook = build.turn_close_hook(self.settings, self.bus, self.engine.provider)
            self.engine.hooks.append(hook)
        if hook is not None:
            hook.enabled = on
        said = "notes distilled after each turn that wrote files" if on else "no notes distilled"
        self.bus.emit(P.NoticePayload(text=f"turn close {'on' if on else 'off'}: {said}"))

    def set_explore(self, on: bool) -> None:
        """Delegation (the explore tool). Off, the tool stays among the tools sent (they are the
        prompt's prefix: the server's cache holds) and answers that delegation is off. On in a
        session that never had it, the tool joins the tools sent: the cache pays that once."""
        from ..tools.explore import Explore

        self.settings.delegate = on
        registry = self.engine.registry
        joined = on and "explore" not in registry
        if joined:
            registry.add(Explore())
            if self.parts.registry is not registry:
                self.parts.registry.add(Explore())
        if on and self.engine.delegate is None:
            self.engine.delegate = self.engine.delegator()
        elif not on:
            self.engine.delegate = None
        said = "the model may hand a question to a read-only helper" if on else "no helper"
        cost = " (the tools sent changed: the server reads the conversation once more)"
        self.bus.emit(
            P.NoticePayload(text=f"explore {'on' if on else 'off'}: {said}{cost if joined else ''}")
        )

    def set_discuss(self, on: bool) -> None:
        """Discussion mode: the model may only read and commit a plan. Every other call is
        refused at dispatch, naming what runs (loop/narrow.py); the tools sent stay the same, so
        the switch costs the server's cached prefix nothing. The model is told at its next turn."""
        self.settings.discuss = on
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
        from ..done.hook import GateHook

        # Proved unable to run at wiring (issue 33): not offered; the gate's notice says why.
        if any(isinstance(h, GateHook) and h.cannot_run for h in self.engine.hooks):
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
        p = self.parts
        self.engine.interrupt()
        self.engine.close()
        if self.engine.fingerprinter is not None:
            self.engine.fingerprinter.close()  # its inotify watch (fs.inotify.max_user_instances)
        p.journal.flush()
        p.log.close()  # fsync'd, and the lock released: the session can be resumed
        p.model.provider.close()
        if p.model.managed is not None:
            p.model.managed.stop()  # a second close finds it stopped

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

    def _memory(self) -> MemoryStore | None:
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

    def _lessons(self) -> LessonsHook | None:
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
    in place: same id, its log appended to, its history, plan and grants back (resume.py)."""
    parts = build.parts(
        settings, bus or Emitter(), approver or DenyAll(), progress, provider, resume
    )
    return Session(parts)
