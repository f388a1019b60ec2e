"""GateHook: the definition of done taking part in a turn.

Before the turn: the red precheck (does the gate already pass?). After each tool result: protected
paths surfaced. When the model stops calling tools: autofix, check, then accept, re-enter with the
report, climb the escalation ladder, roll back to near-green, or park with a handoff. At the end:
the verification seal for turn_ended. Every decision about what a check MEANS is in gate.py; this
file only runs things and says what happened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..adapters.base import Adapter
from ..hooks import CallRecord, Hook, Reenter, Stop, TurnContext
from .criteria import (
    CriterionRunner,
    DoneSet,
    Report,
    check,
    done_set_from_config,
    is_stale,
    verification_of,
)
from .errors import ErrorAges, errors_of
from .expert import Expert
from .gate import Decision, Gate
from .ladder import (
    HANDOFF_FILE,
    build_handoff,
    clear_handoff,
    load_handoff,
    rung_max_tokens,
    steer_message,
    write_handoff,
)
from .messages import focus_file, reenter_message, tried_calls
from .near_green import NearGreen, Store
from .original import check_against_originals
from .protected import changed_paths, protected_state

AdapterLookup = Callable[[Path], Adapter]  # workspace -> the adapter for its stack


class GateHook(Hook):
    name = "done"

    def __init__(
        self,
        done: DoneSet,
        *,
        run: CriterionRunner,
        adapters: AdapterLookup,
        write_seq: Callable[[], int] | None = None,
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
        self.write_seq = write_seq
        self.max_stall_cycles = max_stall_cycles
        self.precheck = precheck
        self.autofix = autofix
        self.escalation = escalation
        self.expert = expert
        self.store = store
        # Session state: the seal outlives a turn (a question asked after a green turn is still
        # "passed"), so the last report and the write count it saw are kept here.
        self.report: Report | None = None
        self._checked_seq: int | None = None
        self._baseline_seq: int | None = None
        self._first_turn = True
        self._adapter: Adapter | None = None
        self._stale_shown = False
        # A command ran since the last check. The bash tool moves the write count too; this does
        # not rely on it, since a command's effects are the ones nobody declared.
        self._ran_command = False
        self._new_turn_state("")

    @classmethod
    def from_settings(
        cls,
        settings: Any,
        runner: Any,
        *,
        run: CriterionRunner | None = None,
        adapters: AdapterLookup | None = None,
        write_seq: Callable[[], int] | None = None,
        expert: Expert | None = None,
        store: Store | None = None,
    ) -> GateHook:
        """Wire from Settings.done and a sandbox runner (what cerveau_tui/session.py calls). `store` is the
        session's shared blob store when there is one; else one over the same directory."""
        from .expert import expert_from_settings
        from .runner import sandbox_runner

        if adapters is None:
            # The registry is the one sanctioned path to concrete adapters (see .importlinter).
            from ..adapters.registry import AdapterRegistry

            adapters = AdapterRegistry()
        if run is None:
            run = sandbox_runner(
                runner, Path(settings.workspace), settings.sandbox, settings.output_cap
            )
        cfg = settings.done
        # Disabled keeps the protected paths surfaced and the seal reported; only the checks go.
        criteria = cfg.criteria if cfg.enabled else []
        return cls(
            done_set_from_config(criteria, cfg.protected),
            run=run,
            adapters=adapters,
            write_seq=write_seq,
            max_stall_cycles=cfg.max_stall_cycles,
            precheck=cfg.precheck,
            autofix=cfg.autofix,
            escalation=getattr(cfg, "escalation", True),
            expert=expert if expert is not None else expert_from_settings(settings),
            store=(lambda _ws: store) if store is not None else _blob_store,
        )

    # --- bookkeeping -------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return bool(self.done.criteria)

    def _new_turn_state(self, task: str) -> None:
        self.task = task
        self.gate = Gate(self.max_stall_cycles, self.escalation, self.expert is not None)
        self.ages = ErrorAges()
        self.near: NearGreen | None = None
        self.touched: list[str] = []
        self._protected: dict[str, str] = {}
        self.last_decision: Decision | None = None

    def _seq(self, ctx: TurnContext) -> int:
        return self.write_seq() if self.write_seq is not None else ctx.state.write_seq

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
        seq = self._seq(ctx)
        # Nothing written since the last check (every tool, bash included, moves the count): the
        # answer is the same, and a model that only keeps saying "done" must not buy a full test
        # run per claim. The precheck always runs: the person may have edited between turns.
        reused = (
            not (precheck or force or self._ran_command)
            and self.report is not None
            and self._checked_seq == seq
        )
        self._ran_command = False
        if reused and self.report is not None:
            report = Report(dict(self.report.states), [], dict(self.report.outputs))
        else:
            report = check(self.done, self.run)
        report.touched_protected = sorted(self.touched)
        self.report, self._checked_seq = report, seq
        if self.done.protected:
            # What the check (or the rollback before it) did to protected files is not the
            # model's doing; the next command is compared with this state.
            self._protected = protected_state(ctx.workspace, self.done)
        self._stale_shown = False
        errors = errors_of(report, self._adapter) if self._adapter is not None else []
        self.ages.update(errors)
        ctx.emit(
            "check",
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
        if not self.active:
            return []
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
        self._protected = protected_state(ctx.workspace, self.done)
        # The measurement as it was before this turn, kept so a green check earned by editing it
        # can be re-run against the original (done/original.py).
        self._originals: dict[str, str | None] = {}
        if self.store is not None and self._protected:
            try:
                self._originals = self.store(ctx.workspace).snapshot_files(sorted(self._protected))
            except OSError:
                self._originals = {}
        if self._baseline_seq is None:
            self._baseline_seq = self._seq(ctx)
        if self._first_turn:
            self._first_turn = False
            handoff = load_handoff(ctx.workspace)
            if handoff:
                ctx.tell(
                    "A previous session parked on this work and left this handoff; resume "
                    "from it instead of starting over:\n" + handoff
                )
                ctx.emit("notice", {"text": f"resuming from the handoff in {HANDOFF_FILE}"})
        if not self.active:
            return None
        self._adapter = self.adapters(ctx.workspace)
        if self.store is not None:
            self.near = NearGreen(self.store(ctx.workspace), ctx.workspace)
        if not self.precheck:
            return None
        report, errors = self._check(ctx, precheck=True)
        self.gate.baseline(report, errors)
        if self.near is not None:
            self.near.observe(report.unmet(), errors)
        if report.all_met:
            # Red precheck: a gate that is already green cannot measure this task. Say so, and
            # ask the person whether to go on; headless (nobody to ask) goes on and says so.
            met = ", ".join(report.met())
            go_on = ctx.ask(
                f"The done gate already passes ({met}) before any change.",
                "the checks cannot tell whether this task gets done; continue anyway?",
            )
            if go_on is False:
                ctx.emit("notice", {"text": f"stopped: the done gate already passes ({met})"})
                return Stop("stopped", message=f"the done gate already passes ({met}); stopped at the person's word")
            ctx.emit("notice", {"text": f"the done gate already passes before any change ({met}); continuing"})
        return None

    def resume_brief(self) -> list[str]:
        if not self.active or self.report is None:
            return []
        unmet = self.report.unmet()
        return [f"Done criteria still unmet: {', '.join(unmet)}"] if unmet else []

    def on_tool_result(self, ctx: TurnContext, record: CallRecord) -> str | None:
        if self.report is not None and not self._stale_shown:
            if is_stale(self._checked_seq, self._seq(ctx)):
                # The status bar turns stale on the write itself, not at the end of the turn:
                # "passed" on screen while the model rewrites the file is the false confidence.
                self._stale_shown = True
                ctx.emit("verification", {"state": "stale", "unmet": self.report.unmet()})
        wrote = list(record.wrote)
        self._ran_command = self._ran_command or record.command is not None
        if record.command is not None and self.done.protected:
            after = protected_state(ctx.workspace, self.done)
            wrote += changed_paths(self._protected, after)
            self._protected = after
        hits = [p for p in self.done.touched_protected(wrote) if p not in self.touched]
        if hits:
            self.touched += hits
            text = (
                "protected path(s) written: "
                + ", ".join(hits)
                + " (they are the measurement; the change is in the final report)"
            )
            ctx.emit(
                "touched_protected",
                {"paths": hits, "call_id": record.call_id, "tool": record.name, "text": text},
            )
            ctx.emit("notice", {"text": text, "banner": True})
        return None

    def on_answer(self, ctx: TurnContext, content: str) -> Stop | Reenter | None:
        if not self.active:
            return None
        if ctx.settings.discuss or ctx.settings.sandbox == "read-only":
            # A turn that cannot write cannot make a criterion pass: re-entering would spend the
            # ladder asking for the impossible. The report still goes to turn_ended.
            self._check(ctx)
            return None
        fixes = self._autofix(ctx)
        report, errors = self._check(ctx, force=bool(fixes))
        report = self._against_originals(ctx, report)
        decision = self.gate.judge(report, errors)
        self.last_decision = decision
        if decision.action == "accept":
            self._accept(ctx, report)
            return None
        rolled = self._maybe_roll_back(ctx, report, errors, decision)
        if rolled:
            report, errors = self._check(ctx, force=True)
        notes = fixes + rolled
        if decision.action == "escalate":
            return self._escalate(ctx, report, decision, notes)
        if decision.action == "park":
            return self._park(ctx, report)
        if decision.action == "incomplete":
            text = f"no progress in {self.max_stall_cycles} cycles; stopping with the report"
            ctx.emit("notice", {"text": text})
            return Stop("incomplete", message=str(report))
        return Reenter(reenter_message(report, decision, self.max_stall_cycles, notes))

    def _against_originals(self, ctx: TurnContext, report: Report) -> Report:
        """All met, but protected files were written this turn: does the ORIGINAL measurement
        agree? If not, the criteria it fails are unmet, and the model is told why."""
        originals = getattr(self, "_originals", {})
        if not (report.all_met and self.touched and originals and self.store is not None):
            return report
        original = check_against_originals(
            ctx.workspace, self.done, self.run, self.store(ctx.workspace), originals, self.touched
        )
        if original is None or original.all_met:
            return report
        failing = original.unmet()
        ctx.emit(
            "notice",
            {
                "text": "the checks pass only with the edited protected files; with the originals "
                + ", ".join(failing) + " still fail",
                "banner": True,
            },
        )
        merged = Report(dict(report.states), list(report.touched_protected), dict(report.outputs))
        for name in failing:
            merged.states[name] = original.states[name]
            merged.outputs[name] = (
                "Your edits to the protected files ("
                + ", ".join(self.touched)
                + ") made this pass; with the original versions it still fails:\n"
                + original.outputs.get(name, "")
            )
        self.report = merged
        return merged

    def on_turn_end(self, ctx: TurnContext, reason: str) -> dict[str, Any]:
        seq = self._seq(ctx)
        changed = seq > (self._baseline_seq or 0)
        report = self.report if self.active else None
        stale = is_stale(self._checked_seq, seq) if self.active else False
        seal = verification_of(report, changed, stale)
        unmet = report.unmet() if report is not None else []
        ctx.emit("verification", {"state": str(seal), "unmet": unmet})
        return {
            "verification": str(seal),
            "unmet": unmet,
            "touched_protected": sorted(self.touched),
        }

    # --- the outcomes ----------------------------------------------------------------------------

    def _autofix(self, ctx: TurnContext) -> list[str]:
        if not self.autofix or self._adapter is None:
            return []
        protected = set(self.done.touched_protected(self._written(ctx)))
        paths = [p for p in self._written(ctx) if p not in protected]
        try:
            changed = self._adapter.autofix(ctx.workspace, self.run, paths)
        except Exception as exc:  # noqa: BLE001 - a broken fixer must not cost the check
            ctx.emit("notice", {"text": f"autofix skipped: {exc}"})
            return []
        for line in changed:
            ctx.emit("notice", {"text": f"autofix: {line}"})
        return [f"autofix: {line} (re-read these files before editing them)" for line in changed]

    def _accept(self, ctx: TurnContext, report: Report) -> None:
        if report.all_met and clear_handoff(ctx.workspace):
            ctx.emit(
                "notice", {"text": "done criteria met; the parked handoff is resolved and removed"}
            )
        if not report.any_available:
            ctx.emit(
                "notice",
                {"text": "no done criterion could be checked: " + ", ".join(report.states)},
            )
        if report.touched_protected:
            ctx.emit(
                "notice",
                {
                    "text": "criteria met, but protected paths were written: "
                    + ", ".join(report.touched_protected),
                    "banner": True,
                },
            )
        return None

    def _maybe_roll_back(
        self, ctx: TurnContext, report: Report, errors: list[str], decision: Decision
    ) -> list[str]:
        near = self.near
        if near is None:
            return []
        unmet = report.unmet()
        if not near.should_roll_back(unmet, errors, decision.progress):
            near.observe(unmet, errors)
            return []
        best = near.best
        paths = near.roll_back(self._written(ctx))
        text = (
            f"rolled back to the best state seen ({best[0] if best else '?'} unmet, "
            f"{best[1] if best else '?'} errors): the last changes added new errors "
            f"({len(set(errors))} now); restored {', '.join(paths) or 'nothing'}"
        )
        ctx.emit(
            "rollback",
            {
                "paths": paths,
                "errors": len(set(errors)),
                "best": list(best) if best else None,
                "text": text,
            },
        )
        ctx.emit("notice", {"text": text})
        return [text + ". Your last edits are undone; read the files again before editing."]

    def _escalate(
        self, ctx: TurnContext, report: Report, decision: Decision, notes: list[str]
    ) -> Reenter:
        rung = decision.rung or "R1"
        ctx.emit(
            "escalation",
            {
                "rung": rung,
                "unmet": report.unmet(),
                "text": f"escalation {rung}: no progress in {self.max_stall_cycles} cycles",
            },
        )
        advice = None
        if rung == "R4" and self.expert is not None:
            try:
                advice = self.expert(self._handoff(ctx, report))
            except Exception as exc:  # noqa: BLE001 - an unreachable expert is a failed rung
                advice = f"(the expert could not be reached: {exc})"
        message = steer_message(
            rung,
            report,
            self.ages.items(),
            focus_file(ctx.workspace, self.done, report, self._written(ctx)),
            advice,
        )
        if notes:
            message = "\n".join(notes) + "\n" + message
        return Reenter(message, max_tokens=rung_max_tokens(rung, ctx.max_tokens))

    def _park(self, ctx: TurnContext, report: Report) -> Stop:
        handoff = self._handoff(ctx, report)
        path = write_handoff(ctx.workspace, handoff)
        rel = path.relative_to(ctx.workspace).as_posix()
        ctx.emit(
            "parked",
            {
                "handoff": handoff,
                "unmet": report.unmet(),
                "path": rel,
                "text": f"parked: the escalation ladder ran out; handoff in {rel}",
            },
        )
        return Stop(
            "parked", message=f"{report}\nparked; handoff written to {rel}", extra={"handoff": rel}
        )

    def _handoff(self, ctx: TurnContext, report: Report) -> str:
        return build_handoff(
            self.task,
            report,
            self.gate.rungs_tried,
            self.ages.items(),
            self._written(ctx),
            tried_calls(ctx.calls),
        )


def _blob_store(workspace: Path) -> Store:
    from ..workspace.store import BlobStore

    return BlobStore(workspace)
