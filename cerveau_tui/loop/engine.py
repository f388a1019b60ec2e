"""The Engine: one turn is rounds of (pack, call the model, dispatch its calls) until it answers.

The engine coordinates and decides nothing domain-specific: guards, plans and the done gate join
through hooks (cerveau_tui/hooks.py); the boundary is the policy's; enforcement is the runner's. It never
writes to a terminal: every fact goes out on the bus.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import protocol as P
from ..bus import Emitter
from ..config import Settings
from ..context.pack import estimate_tokens, system_prompt
from ..hooks import Hook, TurnContext
from ..protocol import EventType
from ..provider.types import Provider, Usage
from ..tools.base import Declared, ToolContext, ToolError, ToolState, display_path, locate
from ..tools.files import unified_diff
from ..tools.registry import Registry
from ..workspace.beneath import read_bytes_beneath
from .approver import Approver
from .dispatch import Dispatcher, publish_result
from .schedule import ToolExecution

#: The work horizon is a property of the model: a cap sized for a ten-file refactor truncates a
#: long-horizon model, and a tiny model given 200 rounds burns them. Matched on the model path.
FAMILY_MAX_ITERATIONS = {"smollm": 16, "gemma": 24, "qwen": 50, "llama": 50, "mistral": 50}
DEFAULT_MAX_ITERATIONS = 40


@dataclass
class Limits:
    max_iterations: int = 0  # zero: the family default
    max_identical_calls: int = 3
    max_turn_tokens: int = 0  # zero: no ceiling


@dataclass
class Outcome:
    turn_id: str
    reason: str
    iterations: int
    usage: Usage = field(default_factory=Usage)
    context_tokens: int = 0
    message: str = ""


def family_max_iterations(model: str) -> int:
    low = model.lower()
    for key, n in FAMILY_MAX_ITERATIONS.items():
        if key in low:
            return n
    return DEFAULT_MAX_ITERATIONS


class Engine:
    def __init__(
        self,
        *,
        provider: Provider,
        registry: Registry,
        bus: Emitter,
        settings: Settings,
        approver: Approver,
        runner: Any = None,
        policy: Any = None,
        hooks: Sequence[Hook] = (),
        limits: Limits | None = None,
        n_ctx: int | None = None,
        model: str = "",
        count_tokens: Callable[[str], int] = estimate_tokens,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.sleep = sleep  # injected: a test of retry behaviour should not spend real seconds
        self.provider = provider
        self.registry = registry
        self.bus = bus
        self.settings = settings
        self.approver = approver
        self.runner = runner
        self.policy = policy
        self.hooks = list(hooks)
        self.workspace = Path(settings.workspace)
        self.n_ctx = n_ctx or settings.n_ctx
        self.model = model
        lim = limits or Limits(
            settings.limits.max_iterations,
            settings.limits.max_identical_calls,
            settings.limits.max_turn_tokens,
        )
        if lim.max_iterations == 0:
            lim.max_iterations = family_max_iterations(model)
        self.limits = lim
        self.count_tokens = count_tokens
        self.history: list[dict[str, Any]] = []
        self.state = ToolState()
        self._cancel = threading.Event()
        self._steer: list[str] = []
        self._steer_lock = threading.Lock()
        self._exec_lock = threading.Lock()
        self._system = system_prompt([s for h in self.hooks for s in h.system_sections()])
        self._dispatch = Dispatcher(self)
        self._task = ""
        self.tool_extra: dict[str, Any] = {}
        self.squeeze = 1.0  # shrinks when the server says our packed prompt did not fit
        self.undo_log: Any = None  # workspace.undo.UndoLog, wired by build_session
        self.turn_changes: dict[str, list[str]] = {}
        self.failures: list[str] = []  # recent failed calls, for the resume brief  # turn id -> paths the fingerprint saw change  # per-session state tools share (the plan)

    # --- public API (thread-safe where noted) ------------------------------------------------

    @property
    def system(self) -> str:
        return self._system

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def interrupt(self) -> None:
        """Thread-safe: stop the running turn at the next safe point (kills a running command)."""
        self._cancel.set()
        cancel_all = getattr(self.approver, "cancel_all", None)
        if cancel_all:
            cancel_all("interrupted")

    def steer(self, text: str) -> None:
        """Thread-safe: queue what the person typed; the loop takes it at the top of its next round."""
        if text.strip():
            with self._steer_lock:
                self._steer.append(text.strip())

    def _take_steer(self) -> list[str]:
        with self._steer_lock:
            out, self._steer = self._steer, []
        return out

    def close(self) -> None:
        self._cancel.set()
        if self.runner is not None:
            self.runner.kill_background()
        for h in self.hooks:
            h.close()

    def tool_context(self, grant: Any = None) -> ToolContext:
        return ToolContext(
            workspace=self.workspace,
            state=self.state,
            runner=self.runner,
            mode=self.settings.sandbox,
            grant=grant,
            cancel=self._cancel,
            bash_timeout=self.settings.bash_timeout_s,
            output_cap=self.settings.output_cap,
            bus=self.bus,
            extra=self.tool_extra,
        )

    def exec(self, command: str) -> str:
        """Run a command the PERSON typed (`!cmd`), outside any turn, through the bash tool and
        the same boundary as the model's commands. Its output enters the history as one user
        message: the person did run it, and the next turn must know what they saw."""
        with self._exec_lock:
            self._cancel.clear()
            self.bus.emit(EventType.USER_EXEC, {"command": command})
            ex = ToolExecution(0, "user-" + uuid.uuid4().hex[:8], "bash", {"command": command})
            tool = self.registry.get("bash")
            if tool is None:
                return "bash is not available"
            ex.declared = tool.declare(tool.Args(command=command), self.tool_context())
            self._emit_call(ex, via="person")
            done = self._dispatch.run_one(ex, self._dispatch.verdict(ex))
            publish_result(self, done, done.result.output)
            self.history.append(
                {"role": "user", "content": f"I ran `{command}` myself:\n{done.result.output}"}
            )
            return done.result.output

    def undo(self) -> Any:
        """Put back what the last turn's file tools changed; report what a command changed
        that cannot be put back. The model is told, so it does not build on vanished work."""
        if self.undo_log is None or not self.undo_log.can_undo():
            self.bus.emit(EventType.NOTICE, {"text": "nothing to undo"})
            return None
        last = list(self.turn_changes)[-1] if self.turn_changes else ""
        result = self.undo_log.undo_last(self.turn_changes.get(last, []))
        if result is None:
            return None
        self.state.record_write(self.workspace)  # the verification seal goes stale
        self.bus.emit(
            EventType.UNDO,
            {"turn_id": result.turn_id, "restored": result.restored, "not_restorable": result.not_restorable},
        )
        text = "The person undid your last turn's file changes"
        if result.restored:
            text += ": " + ", ".join(result.restored[:20]) + " are back as they were"
        if result.not_restorable:
            text += ". Changed by a command and NOT restored: " + ", ".join(result.not_restorable[:20])
        self.history.append({"role": "user", "content": f"[harness] {text}."})
        return result

    def compact(self, keep_rounds: int = 2) -> int:
        """Replace all but the last `keep_rounds` rounds of history with the resume brief (the
        person asked: a long session on a small window). Returns how many rounds were dropped.
        The packer does the same on its own when the window is full."""
        from ..context.pack import rounds
        from .model_call import resume_brief

        spans = rounds(self.history)
        drop = max(0, len(spans) - keep_rounds)
        if drop == 0:
            self.bus.emit(EventType.NOTICE, {"text": "nothing to compact"})
            return 0
        cut = spans[drop][0]
        self.history[:] = [{"role": "user", "content": resume_brief(self, drop)}, *self.history[cut:]]
        self.bus.emit(EventType.NOTICE, {"text": f"compacted: {drop} earlier rounds replaced by a resume brief"})
        return drop

    # --- events --------------------------------------------------------------------------------

    def _emit_call(self, ex: ToolExecution, via: str) -> None:
        d = ex.declared or Declared()
        self.bus.emit(
            EventType.TOOL_CALL,
            {
                "call_id": ex.call_id,
                "name": ex.name,
                "arguments": ex.arguments,
                "index": ex.index,
                "reads": [display_path(self.workspace, p) for p in d.reads],
                "writes": [display_path(self.workspace, p) for p in d.writes],
                "via": via,
            },
        )

    def emit_tool_status(self, ex: ToolExecution, status: str) -> None:
        self.bus.emit(EventType.TOOL_STARTED, {"call_id": ex.call_id, "name": ex.name, "status": status})

    def preview_diff(self, ex: ToolExecution) -> str | None:
        """The diff an approval dialog shows for a file write, computed without writing."""
        # Read as the tool will open it: no link followed (a dialog showing the bytes of a file a
        # link points at outside would leak it to the screen and mislead the person).
        try:
            if ex.name not in ("write_file", "edit_file"):
                return None
            target = locate(self.workspace, ex.arguments["path"])
            try:
                old = read_bytes_beneath(target.root, target.rel, 2_000_000).decode("utf-8", "replace")
            except FileNotFoundError:
                if ex.name == "edit_file":
                    return None
                old = ""
            if ex.name == "write_file":
                return unified_diff(target.shown, old, ex.arguments.get("content", ""))
            new = old.replace(ex.arguments["old"], ex.arguments["new"], 1)
            return unified_diff(target.shown, old, new)
        except (OSError, KeyError, TypeError, ValueError, ToolError):
            return None

    def guard(self, ctx: TurnContext, guard: str, reason: str, told: str) -> None:
        self.bus.emit(
            EventType.GUARD_TRIPPED,
            P.GuardTripped(guard=guard, reason=reason, iteration=ctx.iteration, told=told),  # type: ignore[arg-type]
        )

    # --- the turn -------------------------------------------------------------------------------

    def run(self, task: str) -> Outcome:
        from .turn import run_turn  # the round-by-round logic lives in its own file

        return run_turn(self, task)
