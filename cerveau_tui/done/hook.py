"""GateHook: the half of the definition of done that runs checks. Always in a session, inert
until a definition of done is in force: written criteria, or the gate resolved for the run (the
detected stack's check with `[done] gate = "auto"`, or a command; detected.py, wire.py).

Before the turn: the red precheck (does the gate already pass?). When the model stops calling
tools: autofix, check, re-check against the original protected files, then accept (and polish
once on green, polish.py), re-enter with the report, climb the escalation ladder, roll back to
near-green, or park with a handoff. The rungs change what the model can do: R1's round offers
only the read tools and refuses any other call, R2 turns the server's reasoning on (or raises
the cap), R3's round holds the file tools to one file (to none when no file can be named).
Every check is one verdict (verdict.py), recorded in the SealState it shares with the always-on
SealHook (seal.py), which surfaces protected writes and reports the seal. What a check MEANS is
decided in gate.py; what each outcome does is in outcomes.py; this file runs the checks and
picks the outcome.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import protocol as P
from ..adapters.base import Adapter, RunCommand
from ..hooks import Hook, Reenter, Stop, TurnContext
from ..protocol import TURN_INCOMPLETE
from ..sandbox.base import Runner
from .criteria import DoneSet, Report, done_set_from_config
from .errors import ErrorAges, errors_of
from .escalate import ReasoningSwitch, RoundLocks, escalate
from .expert import Expert
from .findings import check_event, findings_of, for_the_model, merged
from .gate import Gate
from .ladder import build_handoff
from .memory import VerdictMemory
from .messages import (
    focus_file,
    gate_section,
    reenter_message,
    tried_calls,
)
from .near_green import NearGreen, Store, blob_store
from .original import against_originals
from .outcomes import accept, autofix, park, roll_back
from .polish import NO_GATE, Polish, begin_polish, emit_polish, finish_polish, why_no_polish
from .precheck import GreenQuestion, interrupted
from .protected import written_files
from .sandboxed import UNENFORCED, bind_cancel, consents
from .seal import SealState
from .verdict import Verdict, take_verdict

AdapterLookup = Callable[[Path], Adapter]  # workspace -> the adapter for its stack


class GateHook(Hook):
    name = "done"

    def __init__(
        self,
        done: DoneSet,
        *,
        run: RunCommand,
        adapters: AdapterLookup,
        seal: SealState | None = None,
        max_stall_cycles: int = 2,
        precheck: bool = True,
        autofix: bool = True,
        escalation: bool = True,
        expert: Expert | None = None,
        store: Callable[[Path], Store] | None = None,
        polish: bool = False,
        polish_max_iterations: int = 4,
        reasoning: ReasoningSwitch | None = None,
        enforced: bool = True,  # the sandbox holds the check; else it runs only with a yes
        fingerprint: Callable[[], str] | None = None,  # the workspace's digest (memory.py)
        count_tokens: Callable[[str], int] | None = None,  # bounds the findings the model reads
    ) -> None:
        self.done = done
        self.known = VerdictMemory(fingerprint) if fingerprint is not None else None
        self.count_tokens = count_tokens
        self.green = GreenQuestion()
        self._first_fact: str | None = None  # the red precheck's findings, for the first request
        self.enforced = enforced
        self.polish = Polish(polish, polish_max_iterations)
        self._said_no_gate = False
        self.reasoning = reasoning
        self._announce = False  # the gate changed mid-session: say so in the next reminder
        # Why no gate, said once: the detected check while undecided, so "done" without a check
        # is never a silent default (issue 14); or why the detected check cannot run (issue 33).
        self.offer: str | None = None
        self.cannot_run = ""  # why the detected check cannot run here (wire.py), "" when it can
        self.run = run
        self.adapters = adapters
        self.seal = seal if seal is not None else SealState()
        self.max_stall_cycles = max_stall_cycles
        self.precheck = precheck
        self.autofix = autofix
        self.escalation = escalation
        self.expert = expert
        self.store = store
        self._adapter: Adapter | None = None
        self._new_turn_state("")
        self.seal.settle = self._settle

    @classmethod
    def from_settings(
        cls,
        settings: Any,
        sandbox: Runner,
        *,
        seal: SealState | None = None,
        run: RunCommand | None = None,
        adapters: AdapterLookup | None = None,
        expert: Expert | None = None,
        store: Store | None = None,
        done: DoneSet | None = None,
        reasoning: ReasoningSwitch | None = None,
        fingerprint: Callable[[], str] | None = None,
    ) -> GateHook:
        """Wire from Settings.done and the session's sandbox (a sandbox.base.Runner). `store` is
        the session's shared blob store when there is one; else one over the same directory.
        `done`: the definition of done in force (detected.gate_done_set); else the criteria."""
        from .expert import expert_from_settings
        from .sandboxed import run_in_sandbox

        if adapters is None:
            # The registry is the one sanctioned path to concrete adapters (see .importlinter).
            from ..adapters.registry import AdapterRegistry

            adapters = AdapterRegistry()
        if run is None:
            ws = Path(settings.workspace)
            run = run_in_sandbox(sandbox, ws, settings.sandbox, settings.output_cap)
        cfg = settings.done
        if done is None:
            done = done_set_from_config(cfg.criteria if cfg.enabled else [], cfg.protected)
        return cls(
            done,
            run=run,
            adapters=adapters,
            seal=seal,
            max_stall_cycles=cfg.max_stall_cycles,
            precheck=cfg.precheck,
            autofix=cfg.autofix,
            escalation=getattr(cfg, "escalation", True),
            expert=expert if expert is not None else expert_from_settings(settings),
            store=(lambda _ws: store) if store is not None else blob_store,
            polish=cfg.polish,
            polish_max_iterations=cfg.polish_max_iterations,
            reasoning=reasoning,
            enforced=sandbox.enforced,
            fingerprint=fingerprint,
        )

    def use(self, done: DoneSet) -> None:
        """Change the definition of done mid-session (the person answered the TUI's question, or
        chose another gate from the palette): the next turn checks with it. The system prompt is
        the cache prefix and stays as it was; the next reminder says what changed instead."""
        self.done = done
        self._announce = bool(done.criteria)
        self.offer = None
        if self.known is not None:
            self.known.forget()

    # --- bookkeeping -------------------------------------------------------------------------

    def _new_turn_state(self, task: str) -> None:
        self.task = task
        self.gate = Gate(self.max_stall_cycles, self.escalation, self.expert is not None)
        self.ages = ErrorAges()
        self.near: NearGreen | None = None
        # The measurement as it was before this turn, kept so a green check earned by editing it
        # can be re-run against the original (done/original.py). None: not known (no store, or
        # the snapshot failed); {} is known too: no protected file existed.
        self._originals: dict[str, str | None] | None = None
        self.polish.reset()
        self.locks = RoundLocks()  # what the rungs climbed this turn changed (escalate.py)

    def _written(self, ctx: TurnContext) -> list[str]:
        return written_files(ctx.workspace, ctx.state.written)

    def _check(self, ctx: TurnContext, precheck: bool = False, force: bool = False) -> Verdict:
        # One verdict, wherever it is asked for (verdict.py): reused when nothing changed since
        # the last one, decided by the original tests when a protected file was edited. The
        # precheck runs unless the fingerprint says the tree is the one last checked (memory.py):
        # the person may have edited between turns, and only then is there news.
        command = "; ".join(c.command for c in self.done.criteria if c.command.strip())
        known = self.known.recall(self.done) if precheck and self.known is not None else None
        before = self.known.digest() if self.known is not None and known is None else None
        prior = (self.seal.report, self.seal.checked_seq, self.seal.by_originals)
        started = time.monotonic()
        verdict = take_verdict(
            ctx,
            self.done,
            self.run,
            self.seal,
            self._by_originals,
            fresh=precheck or force,
            known=known,
            starting=lambda: ctx.emit(P.CheckStarted(command=command, precheck=precheck)),
        )
        report = verdict.report
        stopped = ctx.cancelled and not verdict.reused
        if stopped:
            # A suite killed half-way measured nothing: the seal keeps what it read before.
            self.seal.report, self.seal.checked_seq, self.seal.by_originals = prior
        elif not verdict.reused and self.known is not None:
            self.known.remember(before, self.done, report, verdict.by_originals)
        # From the verdict's own outputs: a weakened test's green has no errors, the original
        # test's failure has, and a score taken from the former made it the "best state".
        errors = (
            errors_of(report, self._adapter) if self._adapter is not None and not stopped else []
        )
        if not stopped:
            self.ages.update(errors)
        found = merged(findings_of(report, self._adapter.error_lines if self._adapter else None))
        took = 0.0 if verdict.reused else time.monotonic() - started
        ctx.emit(
            check_event(report, errors, command, found, precheck, verdict.reused, stopped, took)
        )
        if precheck and not stopped and report.unmet():
            count = self.count_tokens
            self._first_fact = (
                for_the_model(command, found, count) if count else for_the_model(command, found)
            )
        return replace(verdict, errors=errors)

    def _by_originals(self, ctx: TurnContext, report: Report) -> tuple[Report, bool]:
        store = self.store(ctx.workspace) if self.store is not None else None
        return against_originals(
            ctx, report, self.done, self.run, store, self._originals, self.seal.touched
        )

    # --- hook points ---------------------------------------------------------------------------

    def system_sections(self) -> list[str]:
        return [gate_section(self.done)] if self.done.criteria else []

    def reminders(self, ctx: TurnContext) -> list[str]:
        # After the stable prefix, in the one reminder message of the first request: what the
        # precheck found is the model's first fact (the names it would otherwise guess), and the
        # server's cached prefix (the system message, the earlier turns) is kept.
        said: list[str] = []
        if self._announce:
            self._announce = False
            said.append(
                "The definition of done changed for this session. " + gate_section(self.done)
            )
        if self._first_fact:
            said.append(self._first_fact)
            self._first_fact = None
        return said

    def on_turn_start(self, ctx: TurnContext, task: str) -> Stop | None:
        self._new_turn_state(task)
        self._first_fact = None
        bind_cancel(self.run, ctx.cancel)  # Esc Esc kills the check's process group
        if not self.done.criteria:
            if self.offer:
                ctx.emit(P.NoticePayload(text=self.offer))
                self.offer = None
            return None  # no gate (yet): the seal alone speaks for this turn
        if not self.enforced and not consents([c.command for c in self.done.criteria], ctx.ask):
            self.use(DoneSet(protected=self.done.protected))  # refused: no gate this session
            ctx.emit(P.NoticePayload(text="done check not run: " + UNENFORCED))
            return None
        self.enforced = True  # the person said yes: asked once a session
        if self.store is not None:
            try:
                self._originals = self.store(ctx.workspace).snapshot_files(
                    sorted(self.seal.protected)
                )
            except OSError:
                self._originals = None
        self._adapter = self.adapters(ctx.workspace)
        if self.store is not None:
            self.near = NearGreen(self.store(ctx.workspace), ctx.workspace)
        return self._precheck(ctx) if self.precheck else None

    def before_tool(self, ctx: TurnContext, name: str, arguments: dict[str, Any]) -> str | None:
        return self.locks.refusal(ctx.iteration, name, arguments)

    def after_iteration(self, ctx: TurnContext) -> Stop | None:
        if self.polish.out_of_rounds(ctx.iteration):
            return self._finish_polish(ctx)
        return None

    def _precheck(self, ctx: TurnContext) -> Stop | None:
        if ctx.cancelled:
            return interrupted()
        verdict = self._check(ctx, precheck=True)
        if ctx.cancelled:
            return interrupted()  # stopped during the suite: no baseline, no question
        report, errors = verdict.report, verdict.errors
        self.gate.baseline(report, errors)
        if self.near is not None:
            self.near.observe(report.unmet(), errors)
        if not report.all_met:
            return None
        # Green before any change: the check cannot measure this task. Asked only when the task
        # aims at what it measures, once a session (precheck.py has the rule).
        return self.green.ask(ctx, self.task, self.done, report.met())

    def on_answer(self, ctx: TurnContext, content: str) -> Stop | Reenter | None:
        if not self.done.criteria:
            if self.polish.enabled and not self._said_no_gate and any(c.wrote for c in ctx.calls):
                self._said_no_gate = True  # a fact of the session, not news at every turn
                emit_polish(ctx, "skipped", NO_GATE)
            return None
        if self.polish.active:
            return self._finish_polish(ctx)
        if ctx.settings.discuss or ctx.settings.sandbox == "read-only":
            # A turn that cannot write cannot make a criterion pass: re-entering would spend the
            # ladder asking for the impossible. The report still goes to turn_ended.
            self._check(ctx)
            return None
        fixes = self._autofix(ctx)
        verdict = self._check(ctx, force=bool(fixes))
        report, errors = verdict.report, verdict.errors
        decision = self.gate.judge(report, errors)
        if decision.action == "accept":
            accept(ctx, report)
            return self._polish_or_accept(ctx, report, content)
        rolled: list[str] = []
        if self.near is not None and not verdict.reused:
            # A reused verdict measured the same workspace as the last one, whose rollback (or
            # checkpoint) is already done: another would restore nothing and buy a test run.
            rolled = roll_back(ctx, self.near, verdict, decision.progress, self._written(ctx))
        if rolled:
            verdict = self._check(ctx, force=True)
            report, errors = verdict.report, verdict.errors
        notes = fixes + rolled
        if decision.action == "escalate":
            return self._escalate(ctx, report, decision.rung or "R1", notes)
        if decision.action == "park":
            return park(ctx, report, self._handoff(ctx, report))
        if decision.action == "incomplete":
            text = f"no progress in {self.max_stall_cycles} cycles; stopping with the report"
            ctx.emit(P.NoticePayload(text=text))
            return Stop(TURN_INCOMPLETE, message=str(report))
        message = reenter_message(report, decision, self.max_stall_cycles, notes)
        return Reenter(message, request_extra=dict(self.locks.reasoning_extra))

    # --- the steps of an answer ------------------------------------------------------------------

    def _autofix(self, ctx: TurnContext) -> list[str]:
        if not self.autofix or self._adapter is None:
            return []
        protected = set(self.done.touched_protected(self._written(ctx)))
        paths = [p for p in self._written(ctx) if p not in protected]
        return autofix(ctx, self._adapter, self.run, paths)

    def _escalate(self, ctx: TurnContext, report: Report, rung: str, notes: list[str]) -> Reenter:
        return escalate(
            ctx,
            self.locks,
            rung,
            report,
            stall_cycles=self.max_stall_cycles,
            errors=self.ages.items(),
            focus=lambda: focus_file(ctx.workspace, self.done, report, self._written(ctx)),
            handoff=lambda: self._handoff(ctx, report),
            reasoning=self.reasoning,
            expert=self.expert,
            notes=notes,
        )

    # --- polish on green (polish.py) -------------------------------------------------------------

    def _polish_or_accept(self, ctx: TurnContext, report: Report, answer: str) -> Reenter | None:
        why = why_no_polish(self.polish, report, ctx.calls)
        if why is not None or self.near is None:
            emit_polish(ctx, "skipped", why or "no checkpoint store to undo a polish with")
            return None
        return begin_polish(ctx, self.polish, self.near, answer)

    def _finish_polish(self, ctx: TurnContext, ended: str | None = None) -> Stop:
        def recheck() -> Report:
            return self._check(ctx, force=True).report

        return finish_polish(ctx, self.polish, self.near, recheck, ended)

    def _settle(self, ctx: TurnContext, reason: str) -> None:
        """Before the seal is read: a turn cut mid-polish gets the verdict of a finished one."""
        if self.polish.active:
            self._finish_polish(ctx, ended=reason)

    def _handoff(self, ctx: TurnContext, report: Report) -> str:
        return build_handoff(
            self.task,
            report,
            self.gate.rungs_tried,
            self.ages.items(),
            self._written(ctx),
            tried_calls(ctx.calls),
        )
