"""At the end of a turn a guard stopped, the stopped rounds fold into one harness note.

What is folded and what the note says: guards/stops.py (pure). This module collects the turn's
guard trips from the bus, and applies the fold where compaction rewrites what the model reads:
the window (context/window.py), never the history, which keeps every message for the log.

Where and when, decided against the prompt-cache rule ("only ever append between compactions"):
the fold is a compaction of the stopped rounds, done ONCE, at the turn's end, and nowhere else.
- Not mid-turn: the breaker's question and the repeat guard's refusal are what the model must
  read right then; folding them away mid-turn would also re-read the rest of the turn each time.
- Not at the next turn's start: the facts (which call ids, which trips) are the stopped turn's,
  and the window state is persisted at a `compacted` event (session/journal.py), so a resumed
  session (`--continue`) reads the folded window, not the stopped calls again.
- The cost is what follows the first stopped round, re-read once by the server at the next
  request: the kept rounds after it, the note, the next request. The stopped rounds themselves
  are no longer sent (measured in benchmarks/guard_stops.py). Sessions no guard stopped are
  untouched, byte for byte (tests/sessions/test_wire_identity.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import protocol as P
from ..bus import Emitter
from ..context.pack import message_tokens
from ..history import Message
from ..hooks import CallRecord
from ..protocol import Event, GuardTripped, payload_of
from .guards.stops import (
    Fold,
    GuardStop,
    breaker_stops,
    failing_repeats,
    fold,
    truncation_stop,
)
from .model_call import ModelCall
from .state import EngineState

#: The `compacted` event's reason for a fold (protocol/describe.py words it).
REASON = "guard_stop"


class StopNotes:
    """One turn's guard stops: heard on the bus (the breaker is a hook the turn does not know),
    or told by the turn (the repeat guard, whose call ids it holds)."""

    def __init__(self, bus: Emitter, turn_id: str) -> None:
        self.bus = bus
        self.turn_id = turn_id
        self.start = 0  # the history index after the turn's request (Turn._begin sets it)
        self.trips: list[GuardTripped] = []
        self.stops: list[GuardStop] = []
        self._unsubscribe: Callable[[], None] | None = bus.subscribe(self._heard)

    def _heard(self, ev: Event) -> None:
        if ev.type == GuardTripped.event_type and ev.turn_id == self.turn_id:
            payload = payload_of(ev)
            if isinstance(payload, GuardTripped):
                self.trips.append(payload)

    def add(self, stop: GuardStop) -> None:
        self.stops.append(stop)

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def finish(
        self, state: EngineState, records: Sequence[CallRecord], identical: int, model: ModelCall
    ) -> Fold | None:
        """At the turn's end: stop listening, fold what the guards stopped. A fold that fails
        is said and skipped: the turn's end must not."""
        self.close()
        try:
            stops = self.collect(records, identical)
            # The figures are the window's as ModelCall reports them: the system message and
            # what is sent beside the messages (the tools, the template's framing) included.
            system = _tokens([{"role": "system", "content": model.system}], model.count_tokens)
            return apply_fold(
                state,
                self.bus,
                self.start,
                stops,
                count=model.count_tokens,
                beside=system + model.overhead(),
                n_ctx=model.n_ctx,
            )
        except Exception as exc:
            self.bus.emit(P.ErrorPayload(message=f"stop notes: {exc}", error_class="internal"))
            return None

    def collect(self, records: Sequence[CallRecord], identical: int) -> list[GuardStop]:
        """Every stop of the turn: the ones the turn told (the repeat guard's), then from the
        events heard the breaker's shapes, the calls that failed identically when the progress
        guard stopped the turn, and the truncation guard's notes. A call is named by one stop."""
        stops = list(self.stops)
        taken = frozenset().union(*(s.call_ids for s in stops))
        shapes = [t.reason for t in self.trips if t.guard == "breaker"]
        stops += breaker_stops(records, shapes, taken)
        if any(t.guard == "stall" for t in self.trips):
            taken = frozenset().union(*(s.call_ids for s in stops))
            stops += [s for s in failing_repeats(records, identical) if not s.call_ids & taken]
        cuts = [t for t in self.trips if t.guard == "truncation"]
        cut = truncation_stop([t.reason for t in cuts], [t.told for t in cuts])
        return [*stops, *([cut] if cut else [])]


def apply_fold(
    state: EngineState,
    bus: Emitter,
    turn_start: int,
    stops: Sequence[GuardStop],
    *,
    count: Callable[[str], int],
    beside: int = 0,
    n_ctx: int = 0,
) -> Fold | None:
    """Fold the stopped rounds of the turn begun at `turn_start`: the note enters the history
    (the log has it, in order), and the window reads the note instead of the stopped rounds."""
    history = state.history
    done = fold(history.messages, turn_start, stops)
    if done is None:
        return None
    window = state.window
    before = _tokens([*window.frozen, *history[window.upto :]], count)
    note = Message.harness(done.note)
    history.append(note)
    if window.upto > done.start:
        # The stopped rounds went into a compaction already (this turn's): the note alone.
        return done
    window.frozen = [*window.frozen, *history[window.upto : done.start], *done.kept, note.wire]
    window.upto = len(history)
    window.compactions += 1
    state.cache.compacted = True  # the next request's re-read has a known cause
    after = _tokens(window.frozen, count)
    bus.emit(
        P.Compacted(
            tokens_before=before + beside,
            tokens_after=after + beside,
            dropped_rounds=done.rounds,
            summary_source="none",
            n_ctx=n_ctx,
            reason=REASON,
        )
    )
    return done


def _tokens(messages: Sequence[dict[str, Any]], count: Callable[[str], int]) -> int:
    return sum(message_tokens(m, count) for m in messages)
