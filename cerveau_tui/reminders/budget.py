"""Budget notice (the seed's BudgetNotice): the model and the person are told when the window fills.

A small model does not know how much room it has left; it reads a whole log at 88% full and the
next request is compacted under it. At 70% and at 90% of n_ctx (what the server counted for the
last reply, `TurnContext.context_tokens`) it is told once, and the person sees a `budget_notice`
event. Once per crossing: falling back below a mark (a compaction did its work) arms it again.
"""

from __future__ import annotations

from .. import protocol as P
from ..hooks import Hook, Reenter, Stop, TurnContext

MARKS = (70, 90)

_ADVICE = {
    70: "prefer small reads (a range, a search) over whole files, and keep tool outputs short.",
    90: "finish the step in hand; older rounds will soon be compacted into a summary, so write "
    "down anything you still need (a plan update, a note in your answer).",
}


class BudgetHook(Hook):
    name = "budget"

    def __init__(self) -> None:
        self._armed = dict.fromkeys(MARKS, True)
        self._pending: int | None = None  # the highest mark crossed, not yet told to the model

    def _check(self, ctx: TurnContext) -> None:
        # 0 is "not known yet" (a turn's first call): it must not re-arm a mark by itself.
        if ctx.n_ctx <= 0 or ctx.context_tokens <= 0:
            return
        percent = ctx.context_tokens * 100 / ctx.n_ctx
        for mark in MARKS:
            if percent < mark:
                self._armed[mark] = True
                if self._pending is not None and self._pending >= mark:
                    self._pending = None  # fell back before the model was told: old news
            elif self._armed[mark]:
                self._armed[mark] = False
                self._pending = max(mark, self._pending or 0)
                ctx.emit(
                    P.BudgetNotice(
                        percent=mark, context_tokens=ctx.context_tokens, n_ctx=ctx.n_ctx
                    ),
                )

    # The event goes out when the crossing is seen, whichever of these comes first; the model
    # reads the notice before its next call.
    def after_iteration(self, ctx: TurnContext) -> Stop | None:
        self._check(ctx)
        return None

    def on_answer(self, ctx: TurnContext, content: str) -> Stop | Reenter | None:
        self._check(ctx)
        return None

    def reminders(self, ctx: TurnContext) -> list[str]:
        self._check(ctx)
        mark, self._pending = self._pending, None
        if mark is None:
            return []
        used = f"{ctx.context_tokens:,} of {ctx.n_ctx:,} tokens" if ctx.context_tokens else ""
        return [
            f"The context window is over {mark}% full"
            + (f" ({used})" if used else "")
            + f": {_ADVICE[mark]}"
        ]
