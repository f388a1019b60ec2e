"""The person's hooks at the loop's points: one internal Hook (hooks.py) that runs the commands
of `[[hooks.<event>]]` and turns their exits into what the loop already knows how to do.

    session_start     once, before the first prompt is admitted      stdout: context
    user_prompt       on_prompt: exit 2 refuses the prompt            stdout: context
    pre_tool          before_tool: exit 2 refuses the call, with its stderr as the tool's result
    post_tool         on_tool_result: exit 2 gives its stderr to the model     stdout: context
    approval_waiting  when an approval dialog opens, in the background: a notifier
    pre_compact       before_compact                                  stdout: context after it
    turn_end          on_answer: exit 2 sends the model back to work with its stderr, at most
                      `max_continuations` times a turn (the done ladder's bound, for the same
                      reason: a hook that always says "keep going" must not run a turn forever)

Context is what the model reads next as part of the harness's one reminder message after the
history (loop/remind.py): appended, never a prefix change. Placed LAST among the session's hooks,
so turn_end runs once the done gate has accepted the answer, not before it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from ..bus import Emitter
from ..config import HooksConfig
from ..hooks import CallRecord, Hook, Reenter, TurnContext
from ..protocol import ApprovalRequested, CallStatus, Event, NoticePayload, payload_of
from . import contract
from .run import HookRunner, Ran

#: The context queued for the model, at most (the oldest goes first): a chatty hook on every
#: call must not fill the window with reminders.
QUEUE_MAX_BYTES = 16 * 1024


@functools.cache
def _path_defaults() -> dict[str, str]:
    """The built-in tools' `path` defaults, from their own argument models."""
    from ..tools.base import Tool
    from ..tools.explore import Explore
    from ..tools.registry import default_tools

    tools: list[type[Tool]] = [*(type(t) for t in default_tools()), Explore]
    out: dict[str, str] = {}
    for t in tools:
        field = t.Args.model_fields.get("path")
        if field is not None and isinstance(field.default, str):
            out[t.name] = field.default
    return out


class PersonHooks(Hook):
    name = "person-hooks"

    def __init__(self, config: HooksConfig, runner: HookRunner, bus: Emitter) -> None:
        self.config = config
        self.runner = runner
        self.bus = bus
        self._context: list[str] = []
        self._lock = threading.Lock()
        self._started = False
        self._continued: dict[str, int] = {}  # turn_id -> continuations given
        self._ended: set[str] = set()  # turns whose turn_end hooks ran
        self._cancel: threading.Event | None = None
        self._notifiers: list[threading.Thread] = []
        self._closing = threading.Event()  # kills notifiers still running when the session ends
        self._unsubscribe: Callable[[], None] | None = None
        if config.approval_waiting:
            self._unsubscribe = bus.subscribe(self._on_event)

    # --- running ---------------------------------------------------------------------------------

    def _run(
        self,
        event: str,
        fields: dict[str, Any],
        *,
        tool: str = "",
        paths: tuple[str, ...] = (),
        cancel: threading.Event | None = None,
    ) -> list[Ran]:
        """Every hook of `event` that matches, in the order written; the first block ends it.
        `paths`: the call's path as the tool resolves it (contract.call_paths). `cancel`: what
        kills a running hook; by default the turn's stop (Esc Esc)."""
        ran: list[Ran] = []
        for hook in getattr(self.config, event):
            if tool and not contract.Matcher.parse(hook.match)(tool, paths):
                continue
            r = self.runner.run(hook, event, fields, cancel=cancel or self._cancel, tool=tool)
            ran.append(r)
            if r.outcome == "ok" and r.stdout.strip() and event != "approval_waiting":
                self._add_context(f"[hook {r.name}, {event}]\n{r.stdout.strip()}")
            if r.outcome == "blocked":
                break
        return ran

    def _add_context(self, text: str) -> None:
        with self._lock:  # pre_tool hooks of calls the dispatcher runs side by side
            self._add_context_locked(text)

    def _add_context_locked(self, text: str) -> None:
        self._context.append(text)
        while (
            len(self._context) > 1 and sum(len(t.encode()) for t in self._context) > QUEUE_MAX_BYTES
        ):
            self._context.pop(0)

    def _paths(self, arguments: dict[str, Any], tool: str = "") -> tuple[str, ...]:
        """A call that leaves `path` out walks the tool's default (`list_files`, `search`: the
        root): matched as that, or `*(secrets/**)` would miss a search of everything."""
        if "path" not in arguments and tool in _path_defaults():
            arguments = {**arguments, "path": _path_defaults()[tool]}
        return contract.call_paths(self.runner.workspace, arguments)

    def _start_once(self, ctx: TurnContext) -> None:
        if self._started:
            return
        self._started = True
        if self.config.session_start:
            source = "resume" if len(ctx.history) else "startup"
            self._run("session_start", {"source": source})

    # --- the loop's points -----------------------------------------------------------------------

    def on_prompt(self, ctx: TurnContext, prompt: str) -> str | None:
        self._cancel = ctx.cancel
        self._start_once(ctx)
        for r in self._run("user_prompt", {"prompt": prompt}):
            if r.outcome == "blocked":
                return f"the hook {r.name} refused the prompt: {r.reason}"
        return None

    def before_tool(self, ctx: TurnContext, name: str, arguments: dict[str, Any]) -> str | None:
        if not self.config.pre_tool:
            return None
        paths = self._paths(arguments, name)
        fields = {"tool": {"name": name, "arguments": arguments, "paths": list(paths)}}
        for r in self._run("pre_tool", fields, tool=name, paths=paths):
            if r.outcome == "blocked":
                return f"refused by the person's hook {r.name}: {r.reason}"
            if r.outcome == "stopped":  # the person's interrupt, mid-hook: nothing more runs
                return f"not run: the person stopped the turn during the hook {r.name}"
        return None

    def on_tool_result(self, ctx: TurnContext, record: CallRecord) -> str | None:
        if not self.config.post_tool or record.status in (CallStatus.DENIED, CallStatus.GUARDED):
            return None  # after a call that ran (done or failed), not one that was refused
        paths = self._paths(record.arguments, record.name)
        fields = {
            "tool": {"name": record.name, "arguments": record.arguments, "paths": list(paths)},
            "result": {
                "ok": record.ok,
                "status": str(record.status),
                "exit_code": record.exit_code,
                "output": record.output,
                "wrote": record.wrote,
            },
        }
        for r in self._run("post_tool", fields, tool=record.name, paths=paths):
            if r.outcome == "blocked":
                self._add_context(f"[hook {r.name}, post_tool on {record.name}]\n{r.reason}")
        return None  # what the model reads of the result is the tool's; the hook's is context

    def before_compact(self, reason: str) -> None:
        self._run("pre_compact", {"reason": reason})

    def on_answer(self, ctx: TurnContext, content: str) -> Reenter | None:
        if not self.config.turn_end:
            return None
        self._ended.add(ctx.turn_id)
        given = self._continued.get(ctx.turn_id, 0)
        fields = {"reason": "completed", "answer": content, "continuations": given}
        for r in self._run("turn_end", fields):
            if r.outcome != "blocked":
                continue
            if given >= self.config.max_continuations:
                self.bus.emit(
                    NoticePayload(
                        text=f"hook {r.name} asked to keep working; not again: {given} "
                        "continuations this turn (hooks.max_continuations)",
                        level="warning",
                        source="hooks",
                    )
                )
                return None
            self._continued[ctx.turn_id] = given + 1
            return Reenter(f"[the person's hook {r.name}, at the end of your turn] {r.reason}")
        return None

    def on_turn_end(self, ctx: TurnContext, reason: str) -> dict[str, Any]:
        """A turn that ended without an accepted answer (stopped, a guard, the gate) still ends:
        its turn_end hooks run, and cannot continue it."""
        ran = ctx.turn_id in self._ended
        self._ended.discard(ctx.turn_id)
        self._continued.pop(ctx.turn_id, None)
        if self.config.turn_end and not ran:
            fields = {"reason": str(reason), "answer": "", "continuations": 0}
            for hook in self.config.turn_end:
                self.runner.run(hook, "turn_end", fields, can_block=False)
        return {}

    def reminders(self, ctx: TurnContext) -> list[str]:
        with self._lock:
            said, self._context = self._context, []
        return said

    # --- approval_waiting: a notifier, off the dialog's path -----------------------------------

    def _on_event(self, event: Event) -> None:
        """Called on the emitting thread under the bus's lock: starts a thread, nothing more."""
        if event.type != ApprovalRequested.event_type:
            return
        p = payload_of(event)
        assert isinstance(p, ApprovalRequested)
        fields = {
            "tool": {"name": p.tool},
            "approval": {"summary": p.summary, "reason": p.reason, "paths": p.paths},
        }
        t = threading.Thread(
            target=self._notify,
            args=(fields, p.tool, tuple(n for a in p.paths for n in self._paths({"path": a}))),
            name="hook-approval",
            daemon=True,
        )
        self._notifiers = [n for n in self._notifiers if n.is_alive()] + [t]
        t.start()

    def _notify(self, fields: dict[str, Any], tool: str, paths: tuple[str, ...]) -> None:
        try:
            # Not the turn's stop: the person answering (or interrupting) is what the notifier
            # was for. The session's close is its end (`close`).
            self._run("approval_waiting", fields, tool=tool, paths=paths, cancel=self._closing)
        except Exception as exc:  # a notifier's failure is said, never raised into a thread
            self.bus.emit(NoticePayload(text=f"approval_waiting hook: {exc}", level="error"))

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._closing.set()  # a notifier does not outlive its session
        for t in self._notifiers:
            t.join(timeout=5.0)
