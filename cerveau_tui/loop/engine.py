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
from pathlib import Path
from typing import Any

from .. import protocol as P
from ..bus import Emitter
from ..config import Settings
from ..context.budget import reply_cap
from ..context.pack import estimate_tokens, system_prompt
from ..context.window import WindowState
from ..history import History, Message, Origin
from ..hooks import Hook
from ..plan.state import PlanState
from ..policy.judge import Judge
from ..provider.types import Provider
from ..sandbox.base import Grant, Runner
from ..tools.base import Delegator, ToolContext
from ..tools.explore import ChildRegistry
from ..tools.registry import Registry
from ..workspace.fingerprint.fingerprinter import Fingerprinter
from ..workspace.restore.store import BlobStore
from .approver import Approver, DenyAll
from .delegate import READ_TOOLS, Delegation, LinkedCancel, SideSlot
from .dispatch import Dispatcher
from .events import TurnEvents
from .model_call import ModelCall, resume_brief
from .narrow import DISCUSS_TOOLS
from .schedule import ToolExecution
from .state import EngineState, Limits, Outcome
from .summarise import summariser
from .thinking import ThinkingStop
from .turn import Turn

__all__ = ["Engine", "Limits", "Outcome", "family_max_iterations"]

#: The work horizon is a property of the model: a cap sized for a ten-file refactor truncates a
#: long-horizon model, and a tiny model given 200 rounds burns them. Matched on the model path.
FAMILY_MAX_ITERATIONS = {"smollm": 16, "gemma": 24, "qwen": 50, "llama": 50, "mistral": 50}
DEFAULT_MAX_ITERATIONS = 40
#: How long closing waits for the last turn's after_turn work (a note distilled by the model).
AFTER_TURN_CLOSE_WAIT_S = 30.0


def _after_turn(turn: Turn, stop: threading.Event, before: threading.Thread | None) -> None:
    """One turn's after_turn work, after the turn before's (stopped, it ends soon): two at once
    would mine and store the same lessons side by side."""
    if before is not None:
        before.join()
    turn.after_turn(stop)


def family_max_iterations(model: str) -> int:
    low = model.lower()
    for key, n in FAMILY_MAX_ITERATIONS.items():
        if key in low:
            return n
    return DEFAULT_MAX_ITERATIONS


class Engine:
    """A session's turn cycle: its collaborators and its state; each turn is a `Turn`.

    The tool context is typed (`ToolContext`): the composition root hands the fingerprinter, the
    blob store, the plan state and the delegator here, and every tool call gets them by name."""

    def __init__(
        self,
        *,
        provider: Provider,
        registry: Registry,
        bus: Emitter,
        settings: Settings,
        approver: Approver,
        runner: Runner | None = None,
        policy: Judge | None = None,
        hooks: Sequence[Hook] = (),
        limits: Limits | None = None,
        n_ctx: int | None = None,
        model: str = "",
        count_tokens: Callable[[str], int] = estimate_tokens,
        sleep: Callable[[float], None] = time.sleep,
        fingerprinter: Fingerprinter | None = None,
        store: BlobStore | None = None,
        plan: PlanState | None = None,  # shared with the PlanHook
        delegation: bool = False,  # the explore tool gets a read-only child runner
        system: str | None = None,  # a delegated child's: the session's own (same cached prefix)
        state: EngineState | None = None,  # the session's, when its log listens to it
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
        self.fingerprinter = fingerprinter
        self.store = store
        self.plan = plan
        self.delegate: Delegator | None = None
        self.loop_state = state if state is not None else EngineState()
        self.thinking = ThinkingStop()  # the person's "stop thinking" (thinking.py)
        self.events = TurnEvents(bus, self.workspace)
        self._exec_lock = threading.Lock()
        self._after: threading.Thread | None = None  # the last turn's after_turn work
        self._after_stop = threading.Event()  # set: that work's model call is dropped
        self._discuss_told = False  # the mode the model was last told (_tell_mode)
        if delegation:  # built here, once: the composition root never reaches back in
            self.delegate = self.delegator()
        self._system = (
            system
            if system is not None
            else system_prompt([s for h in self.hooks for s in h.system_sections()])
        )

    # --- what the session owns, by its old names -------------------------------------------------

    @property
    def history(self) -> History:
        return self.loop_state.history

    @property
    def system(self) -> str:
        return self._system

    # --- public API (thread-safe where noted) ------------------------------------------------

    def interrupt(self) -> None:
        """Thread-safe: stop the running turn at the next safe point (kills a running command)."""
        self.loop_state.cancel.set()
        cancel_all = getattr(self.approver, "cancel_all", None)
        if cancel_all:
            cancel_all("interrupted")

    def stop_thinking(self) -> None:
        """Thread-safe: end the model's reasoning now (thinking.py says how)."""
        self.thinking.request()

    def steer(self, text: str) -> None:
        """Thread-safe: queue what the person typed; the loop takes it at the top of its next round."""
        if text.strip():
            self.loop_state.add_steer(text.strip())

    def close(self) -> None:
        self.settle(AFTER_TURN_CLOSE_WAIT_S)
        self.loop_state.cancel.set()
        if self.runner is not None:
            self.runner.kill_background()
        for h in self.hooks:
            h.close()

    def restore(
        self,
        *,
        history: Sequence[Message],
        window: dict[str, Any] | None = None,
        task: str = "",
    ) -> None:
        """A resumed session's state before its first turn: the history as the model saw it,
        the compacted window when there was one."""
        state = self.loop_state
        state.history.restore(history)
        state.task = task
        if window is not None:
            state.window = WindowState.from_dict(window)

    def tool_context(self, grant: Grant | None = None) -> ToolContext:
        return ToolContext(
            workspace=self.workspace,
            state=self.loop_state.tools,
            runner=self.runner,
            mode=self.settings.sandbox,
            grant=grant,
            cancel=self.loop_state.cancel,
            bash_timeout=self.settings.bash_timeout_s,
            output_cap=self.settings.output_cap,
            bus=self.bus,
            fingerprinter=self.fingerprinter,
            store=self.store,
            plan=self.plan,
            delegate=self.delegate,
        )

    def settle(self, timeout: float | None = None) -> None:
        """Wait for the last turn's after_turn work (closing; a benchmark counting its tokens)."""
        after, self._after = self._after, None
        if after is not None:
            after.join(timeout)

    def run(self, task: str) -> Outcome:
        # The next prompt waits for nothing: the last turn's after_turn model call (turn close's
        # distill) is stopped, not waited for, and says it was dropped. Its notes are recalled
        # by the NEXT session only, so no turn of this one needs them. Waiting here held a
        # person's prompt behind up to 1,024 tokens of note-taking.
        self._after_stop.set()
        self._tell_mode()
        registry = self.registry
        turn = Turn(
            task,
            settings=self.settings,
            limits=self.limits,
            workspace=self.workspace,
            bus=self.bus,
            state=self.loop_state,
            hooks=self.hooks,
            registry=registry,
            model=self._model_call(registry),
            dispatcher=self._dispatcher(registry),
            events=self.events,
            approver=self.approver,
            tool_context=self.tool_context,
            fingerprinter=self.fingerprinter,
        )
        outcome = turn.run()
        # turn_ended is out: the answer is on screen before distilling or mining starts.
        self._after_stop = threading.Event()
        self._after = threading.Thread(
            target=_after_turn,
            args=(turn, self._after_stop, self._after),
            name="after-turn",
            daemon=True,
        )
        self._after.start()
        return outcome

    def _tell_mode(self) -> None:
        """Discussion mode said to the model as a message appended when it changes: the tools
        sent do not change (loop/narrow.py), so without it the model learnt of the mode only
        from its first refused call."""
        on = self.settings.discuss
        if on == self._discuss_told:
            return
        self._discuss_told = on
        text = (
            f"[discussion mode] Read and plan only: {', '.join(self._discuss_tools())} run; "
            "every other call is refused until the person leaves discussion mode."
            if on
            else "[discussion mode ended] Every tool runs again."
        )
        self.loop_state.history.append(Message.user(text, Origin.HARNESS))

    def _discuss_tools(self) -> list[str]:
        return [n for n in DISCUSS_TOOLS if n in self.registry]

    def exec(self, command: str) -> str:
        """Run a command the PERSON typed (`!cmd`), outside any turn, through the bash tool and
        the same boundary as the model's commands. Its output enters the history as one user
        message: the person did run it, and the next turn must know what they saw."""
        with self._exec_lock:
            self.loop_state.cancel.clear()
            self.bus.emit(P.UserExec(command=command))
            tool = self.registry.command_tool()
            if tool is None:
                return "bash is not available"
            args = tool.Args.model_validate({"command": command})
            ex = ToolExecution(
                0,
                "user-" + uuid.uuid4().hex[:8],
                tool.name,
                {"command": command},
                tool=tool,
                args=args,
            )
            ex.declared = tool.declare(args, self.tool_context())
            self.events.call(ex, via="person")
            dispatcher = self._dispatcher(self.registry)
            dispatcher.outside_turn = True
            ex.verdict = dispatcher.verdict(ex)
            done = dispatcher.run_one(ex)
            output = done.result.output if done.result is not None else ""
            self.events.result(done, output)
            if self.plan is not None:
                self.plan.publish(self.bus)  # the person's command may have written a step's file
            # Stopped at its dialog, "I ran it" was untrue (the output said "not run").
            said = (
                f"I stopped `{command}` at its dialog" if done.stop else f"I ran `{command}` myself"
            )
            self.loop_state.history.append(Message.user(f"{said}:\n{output}", Origin.SHELL))
            return output

    def compact(self, keep_rounds: int = 2) -> int:
        """Compact the window now (the person asked: a long session on a small window): the
        newest `keep_rounds` rounds stay verbatim, the rest becomes one summary block. The history
        is not rewritten (it keeps everything; persistence relies on that). Returns how many
        rounds went into the block."""
        # A new request from the person, as a turn's start and `exec` are: an interrupt of the
        # turn before must not cancel this compaction's summary call before it is sent.
        self.loop_state.cancel.clear()
        model = self._model_call(self.registry)
        reply = reply_cap(self.n_ctx, self.settings.max_tokens)
        budget = model.budget(reply, self.registry.schemas())
        done = model.compact(budget, reason="person", full=True, keep_rounds=keep_rounds)
        if done is None:
            self.bus.emit(P.NoticePayload(text="nothing to compact"))
            return 0
        return done.dropped_rounds

    def read_only_child(self, bus: Emitter, limits: Limits) -> Engine:
        """The child of a delegation: the lock is structural (only reading tools, no runner, nobody
        to ask), so it cannot write, run a command, or delegate again. Its cancel flag follows
        this engine's: the person's interrupt stops the child's model calls too."""
        child = Engine(
            provider=self.provider,
            registry=ChildRegistry(self.registry, READ_TOOLS),
            bus=bus,
            settings=self.settings.model_copy(update={"sandbox": "read-only"}),
            approver=DenyAll("a delegated turn cannot ask the person"),
            runner=None,
            policy=self.policy,
            hooks=(),
            limits=limits,
            n_ctx=self.n_ctx,
            model=self.model,
            count_tokens=self.count_tokens,
            # The session's own system message, AGENTS.md, stack and skills included: a bare one
            # told the child less than its parent knew and evicted the server's cached prefix.
            system=self._system,
        )
        child.loop_state.cancel = LinkedCancel(self.loop_state.cancel)
        return child

    def delegator(self) -> Delegator:
        """What the explore tool calls (ToolContext.delegate): see loop.delegate.Delegation."""
        return Delegation(
            self.bus,
            self.loop_state.cancel,
            self.read_only_child,
            self.limits,
            self.settings.delegation,
            self.provider if isinstance(self.provider, SideSlot) else None,
        )

    # --- parts -----------------------------------------------------------------------------------

    def _brief(self, dropped: int) -> str:
        return resume_brief(
            dropped, state=self.loop_state, workspace=self.workspace, hooks=self.hooks
        )

    def _model_call(self, registry: Registry) -> ModelCall:
        return ModelCall(
            provider=self.provider,
            registry=registry,
            bus=self.bus,
            state=self.loop_state,
            system=self._system,
            n_ctx=self.n_ctx,
            count_tokens=self.count_tokens,
            brief=self._brief,
            context=self.settings.context,
            summarise=summariser(
                self.provider, self.settings, self._system, cancel=self.loop_state.cancel
            ),
            thinking=self.thinking,
            before_compact=self._before_compact,
        )

    def _before_compact(self, reason: str) -> None:
        for h in self.hooks:
            h.before_compact(reason)

    def _dispatcher(self, registry: Registry) -> Dispatcher:
        return Dispatcher(
            registry=registry,
            judge=self.policy,
            approver=self.approver,
            events=self.events,
            hooks=self.hooks,
            state=self.loop_state,
            tool_context=self.tool_context,
            sleep=self.sleep,
        )
