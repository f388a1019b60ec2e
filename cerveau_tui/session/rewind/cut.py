"""The cut of the conversation: what a rewind takes back of it, one function for both sessions.

A rewind of the conversation goes back to its point (a Cut: the history's length then, the
compacted window then, the plan's bus position and writes then, the grants then in force, and
the turns it takes out). `cut` applies it to a Conversation; fold.py hands it the stored session
a resume rebuilds, live.py the running engine's. The two were two copies of this cut before,
each with its own idea of what a forward gives back.

A forward gives back the Conversation as it was just before the rewind (the Rewinder keeps it),
whatever that rewind's mode; the grants aside: taken back, they are asked again (the safe side).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...history import Message
from ...protocol import Event
from ...protocol.records import RewindRecord
from .points import Point


@dataclass(frozen=True)
class Conversation:
    """What a rewind of the conversation cuts, and its forward gives back."""

    messages: tuple[Message, ...]
    window: dict[str, Any] | None  # the compacted window's state (WindowState.to_dict)
    plan_events: tuple[Event, ...]
    writes: Mapping[str, int]  # the plan ledger's writes: rel path -> seq of its last write
    grants: frozenset[str]  # the session grants' scope keys


@dataclass(frozen=True)
class Cut:
    """Where a rewind of the conversation goes back to; the `rewind` record carries it."""

    history: int
    window: dict[str, Any] | None
    plan_seq: int
    writes: Mapping[str, int]
    grants: frozenset[str]
    turns: frozenset[str]  # the turn ids it takes out

    @classmethod
    def to(cls, p: Point, turns: list[str]) -> Cut:
        return cls(p.history, p.window, p.seq, p.writes, frozenset(p.grants), frozenset(turns))

    @classmethod
    def of(cls, r: RewindRecord) -> Cut:
        """Read back from a `rewind` record."""
        return cls(
            r.history, r.window, r.plan_seq, r.writes, frozenset(r.grants), frozenset(r.cut_turns)
        )

    def record(self) -> dict[str, Any]:
        """The fields of the `rewind` record that `of` reads back."""
        return {
            "history": self.history,
            "window": self.window,
            "plan_seq": self.plan_seq,
            "writes": dict(self.writes),
            "grants": sorted(self.grants),
            "cut_turns": sorted(self.turns),
        }


def cut(c: Conversation, to: Cut) -> Conversation:
    """The conversation back at `to`: the messages then, the window then, the plan events up to
    its bus position with the writes then, and only the grants that were in force then."""
    return Conversation(
        messages=c.messages[: to.history],
        window=to.window,
        plan_events=tuple(e for e in c.plan_events if e.seq <= to.plan_seq),
        writes=dict(to.writes),
        grants=c.grants & to.grants,
    )
