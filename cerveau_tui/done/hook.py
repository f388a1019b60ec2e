"""GateHook: the opt-in half of the definition of done, present only when criteria are set.

Before the turn: the red precheck (does the gate already pass?). When the model stops calling
tools: autofix, check, re-check against the original protected files, then accept, re-enter with
the report, climb the escalation ladder, roll back to near-green, or park with a handoff. Every
check is recorded in the SealState it shares with the always-on SealHook (seal.py), which
surfaces protected writes and reports the seal. What a check MEANS is decided in gate.py; what
each outcome does is in outcomes.py; this file runs the checks and picks the outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..adapters.base import Adapter, RunCommand
from ..hooks import Hook, Reenter, Stop, TurnContext
from ..protocol import TURN_INCOMPLETE, TURN_STOPPED, EventType
from ..sandbox.base import Runner
from .criteria import DoneSet, Report, check, done_set_from_config
from .errors import ErrorAges, errors_of
from .expert import Expert
from .gate import Gate
from .ladder import build_handoff, rung_max_tokens, steer_message
from .messages import focus_file, reenter_message, tried_calls
from .near_green import NearGreen, Store
from .original import check_against_originals, with_originals
from .outcomes import accept, autofix, park, roll_back
from .protected import protected_state
from .seal import SealHook, SealState

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
    ) -> None:
        self.done = done
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
    ) -> GateHook:
        """Wire from Settings.done and the session's sandbox (a sandbox.base.Runner). `store` is the session's shared blob
        store when there is one; else one over the same directory."""
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
        criteria = cfg.criteria if cfg.enabled else []
        return cls(
            done_set_from_config(criteria, cfg.protected),
            run=run,
            adapters=adapters,
            seal=seal,
            max_stall_cycles=cfg.max_stall_cycles,
            precheck=cfg.precheck,
            autofix=cfg.autofix,
            escalation=getattr(cfg, "escalation", True),
            expert=expert if expert is not None else expert_from_settings(settings),
            store=(lambda _ws: store) if store is not None else _blob_store,
        )

    # --- bookkeeping -------------------------------------------------------------------------

    def _new_turn_state(self, task: str) -> None:
        self.task = task
        self.gate = Gate(self.max_stall_cycles, self.escalation, self.expert is not None)
        self.ages = ErrorAges()
        self.near: NearGreen | None = None
        # The measurement as it was before this turn, kept so a green check earned by editing it
        # can be re-run against the original (done/original.py).
        self._originals: dict[str, str | None] = {}

    def _written(self, ctx: TurnContext) -> list[str]:
        out = []
        for p in list(ctx.state.written):
            p = Path(p)
            full = p if p.is_absolute() else ctx.workspace / p
            if full.is_file() and full.is_relative_to(ctx.workspace):
                out.append(full.relative_to(ctx.workspace).as_posix())
        return out

    def _check(
        self, ctx: TurnContext, precheck: bool = False, force: bool = False
    ) -> tuple[Report, list[str]]:
        seal = self.seal
        seq = seal.seq(ctx)
        # Nothing written since the last check (every tool, bash included, moves the count): the
        # answer is the same, and a model that only keeps saying "done" must not buy a full test
        # run per claim. The precheck always runs: the person may have edited between turns.
        last = seal.report
        reused = (
            not (precheck or force or seal.ran_command)
            and last is not None
            and seal.checked_seq == seq
        )
        if reused and last is not None:
            report = Report(dict(last.states), [], dict(last.outputs))
        else:
            report = check(self.done, self.run)
        report.touched_protected = sorted(seal.touched)
        seal.record(report, seq)
        if self.done.protected:
            # What the check (or the rollback before it) did to protected files is not the
            # model's doing; the next command is compared with this state.
            seal.protected = protected_state(ctx.workspace, self.done)
        errors = errors_of(report, self._adapter) if self._adapter is not None else []
        self.ages.update(errors)
        ctx.emit(
            EventType.CHECK,
            {
                "precheck": precheck,
                "reused": reused,
                "states": {k: str(v) for k, v in report.states.items()},
                "unmet": report.unmet(),
                "errors": len(errors),
                "touched_protected": report.touched_protected,
            },
        )
        return report, errors

    # --- hook points ---------------------------------------------------------------------------

    def system_sections(self) -> list[str]:
        names = ", ".join(f"`{c.name}` ({c.command or 'no command'})" for c in self.done.criteria)
        text = (
            f"This workspace has a definition of done: {names}. When you stop calling tools the "
            "harness runs these checks; if any is unmet, you get the output and the turn goes on."
        )
        if self.done.protected:
            text += (
                " Protected paths ("
                + ", ".join(self.done.protected)
                + ") are the measurement: fix "
                "the code, not the tests. Any edit to them is reported to the person."
            )
        return [text]

    def on_turn_start(self, ctx: TurnContext, task: str) -> Stop | None:
        self._new_turn_state(task)
        if self.store is not None and self.seal.protected:
            try:
                self._originals = self.store(ctx.workspace).snapshot_files(
                    sorted(self.seal.protected)
                )
            except OSError:
                self._originals = {}
        self._adapter = self.adapters(ctx.workspace)
        if self.store is not None:
            self.near = NearGreen(self.store(ctx.workspace), ctx.workspace)
        return self._precheck(ctx) if self.precheck else None

    def _precheck(self, ctx: TurnContext) -> Stop | None:
        report, errors = self._check(ctx, precheck=True)
        self.gate.baseline(report, errors)
        if self.near is not None:
            self.near.observe(report.unmet(), errors)
        if not report.all_met:
            return None
        # Red precheck: a gate that is already green cannot measure this task. Say so, and ask
        # the person whether to go on; headless (nobody to ask) goes on and says so.
        met = ", ".join(report.met())
        go_on = ctx.ask(
            f"The done gate already passes ({met}) before any change.",
            "the checks cannot tell whether this task gets done; continue anyway?",
        )
        if go_on is False:
            ctx.emit(EventType.NOTICE, {"text": f"stopped: the done gate already passes ({met})"})
            return Stop(
                TURN_STOPPED,
                message=f"the done gate already passes ({met}); stopped at the person's word",
            )
        ctx.emit(
            EventType.NOTICE,
            {"text": f"the done gate already passes before any change ({met}); continuing"},
        )
        return None

    def on_answer(self, ctx: TurnContext, content: str) -> Stop | Reenter | None:
        if ctx.settings.discuss or ctx.settings.sandbox == "read-only":
            # A turn that cannot write cannot make a criterion pass: re-entering would spend the
            # ladder asking for the impossible. The report still goes to turn_ended.
            self._check(ctx)
            return None
        fixes = self._autofix(ctx)
        report, errors = self._check(ctx, force=bool(fixes))
        report = self._against_originals(ctx, report)
        decision = self.gate.judge(report, errors)
        if decision.action == "accept":
            accept(ctx, report)
            return None
        rolled = (
            roll_back(ctx, self.near, report, errors, decision.progress, self._written(ctx))
            if self.near
            else []
        )
        if rolled:
            report, errors = self._check(ctx, force=True)
        notes = fixes + rolled
        if decision.action == "escalate":
            return self._escalate(ctx, report, decision.rung or "R1", notes)
        if decision.action == "park":
            return park(ctx, report, self._handoff(ctx, report))
        if decision.action == "incomplete":
            text = f"no progress in {self.max_stall_cycles} cycles; stopping with the report"
            ctx.emit(EventType.NOTICE, {"text": text})
            return Stop(TURN_INCOMPLETE, message=str(report))
        return Reenter(reenter_message(report, decision, self.max_stall_cycles, notes))

    # --- the steps of an answer ------------------------------------------------------------------

    def _autofix(self, ctx: TurnContext) -> list[str]:
        if not self.autofix or self._adapter is None:
            return []
        protected = set(self.done.touched_protected(self._written(ctx)))
        paths = [p for p in self._written(ctx) if p not in protected]
        return autofix(ctx, self._adapter, self.run, paths)

    def _against_originals(self, ctx: TurnContext, report: Report) -> Report:
        """All met, but protected files were written this turn: does the ORIGINAL measurement
        agree? If not, the criteria it fails are unmet, and the model is told why."""
        touched = self.seal.touched
        if not (report.all_met and touched and self._originals and self.store is not None):
            return report
        store = self.store(ctx.workspace)
        original = check_against_originals(
            ctx.workspace, self.done, self.run, store, self._originals, touched
        )
        if original is None or original.all_met:
            return report
        ctx.emit(
            EventType.NOTICE,
            {
                "text": "the checks pass only with the edited protected files; with the originals "
                + ", ".join(original.unmet())
                + " still fail",
                "banner": True,
            },
        )
        self.seal.report = merged = with_originals(report, original, touched)
        return merged

    def _escalate(self, ctx: TurnContext, report: Report, rung: str, notes: list[str]) -> Reenter:
        text = f"escalation {rung}: no progress in {self.max_stall_cycles} cycles"
        ctx.emit(EventType.ESCALATION, {"rung": rung, "unmet": report.unmet(), "text": text})
        advice = None
        if rung == "R4" and self.expert is not None:
            try:
                advice = self.expert(self._handoff(ctx, report))
            except Exception as exc:  # noqa: BLE001 - an unreachable expert is a failed rung
                advice = f"(the expert could not be reached: {exc})"
        focus = focus_file(ctx.workspace, self.done, report, self._written(ctx))
        message = steer_message(rung, report, self.ages.items(), focus, advice)
        if notes:
            message = "\n".join(notes) + "\n" + message
        return Reenter(message, max_tokens=rung_max_tokens(rung, ctx.max_tokens))

    def _handoff(self, ctx: TurnContext, report: Report) -> str:
        return build_handoff(
            self.task,
            report,
            self.gate.rungs_tried,
            self.ages.items(),
            self._written(ctx),
            tried_calls(ctx.calls),
        )


def done_hooks(settings: Any, sandbox: Runner, *, store: Store | None = None) -> list[Hook]:
    """The done hooks a session runs, in order: the seal always (it reports protected writes and
    the seal with no criteria at all), then the gate when criteria are configured; both read and
    write one SealState."""
    seal = SealHook.from_settings(settings)
    gate = GateHook.from_settings(settings, sandbox, seal=seal.state, store=store)
    return [seal, gate] if gate.done.criteria else [seal]


def _blob_store(workspace: Path) -> Store:
    from ..workspace.store import BlobStore

    return BlobStore(workspace)
