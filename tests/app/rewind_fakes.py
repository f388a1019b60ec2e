"""A session with a rewinder that answers from fixed data (session/rewind/'s interface), for the
screens' tests and snapshots: the real rewinder's rows carry the clock's time, which a snapshot
cannot hold. The engine-backed tests (test_rewind_engine.py) use the real one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cerveau_tui.bus import Emitter
from cerveau_tui.protocol import Event

from .helpers import FakeSession


@dataclass(frozen=True)
class Entry:
    turn: int
    task: str
    time: str
    files_changed: int
    added: int
    removed: int
    current: bool = True
    point_id: str = ""
    turn_id: str = ""
    at: str = "turn"
    label: str = ""


@dataclass(frozen=True)
class Preview:
    turn: int
    mode: str
    changes: list[str]
    outside: list[str]
    messages_dropped: int


@dataclass(frozen=True)
class Result:
    turn: int
    mode: str
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    history_len: int = 0
    forward_point: str = "p-fwd"
    guarded: str = ""


TASKS = [
    "write the parser for the config format",
    "add a cli that reads a file and prints the parsed config\nwith a second line",
    "rename parse() to load() everywhere and update the tests",
]


def stored_turn(bus: Emitter, task: str, answer: str) -> list[Event]:
    return [
        bus.emit("turn_started", {"input": task}),
        bus.emit("assistant_message", {"content": answer, "reasoning": ""}),
        bus.emit("turn_ended", {"reason": "completed", "iterations": 1}),
    ]


class FakeRewinder:
    def __init__(self, outside: list[str] | None = None) -> None:
        self.outside = list(outside or [])
        self.calls: list[tuple[Any, ...]] = []
        self.forwardable = False
        self.forward_outside: list[str] = []  # what a forward finds changed since the rewind
        bus = Emitter()
        self.events = [
            stored_turn(bus, task, f"done: turn {n + 1}") for n, task in enumerate(TASKS)
        ]
        self.at = len(TASKS)  # turns in the conversation

    def turns(self) -> list[Entry]:
        return [
            Entry(
                n + 1,
                t.splitlines()[0],
                f"2026-12-02T07:{10 + 5 * n:02d}:00+00:00",
                *c,
                n < self.at,
            )
            for n, (t, c) in enumerate(
                zip(TASKS, [(1, 12, 0), (2, 30, 4), (5, 17, 17)], strict=True)
            )
        ]

    def entries(self) -> list[Entry]:
        return self.turns()

    def preview(self, turn: int, mode: str = "both") -> Preview:
        changes = ["src/cli.py", "src/parser.py", "tests/test_parser.py"][: 4 - turn]
        return Preview(turn, mode, changes, list(self.outside), 2 * (len(TASKS) - turn + 1))

    def rewind(
        self, turn: int, mode: str = "both", *, force: bool = False, keep: Any = ()
    ) -> Result:
        self.calls.append(("rewind", turn, mode, force, tuple(keep)))
        if mode != "code":
            self.at = turn - 1
        self.forwardable = True
        kept = list(keep)
        over = list(self.outside) if force else []
        return Result(turn, mode, restored=["src/parser.py"], kept=kept, outside=over)

    def can_forward(self) -> bool:
        return self.forwardable

    def forward(self, *, force: bool = False, keep: Any = ()) -> Result:
        self.calls.append(("forward", force, tuple(keep)))
        if self.forward_outside and not force and set(self.forward_outside) - set(keep):
            from cerveau_tui.session.rewind import OutsideChanges

            raise OutsideChanges(list(self.forward_outside))
        self.at, self.forwardable = len(TASKS), False
        return Result(0, "both", restored=["src/parser.py"])

    def transcript(self) -> list[Event]:
        return [e for turn in self.events[: self.at] for e in turn]


class RewindSession(FakeSession):
    def __init__(self, rewinder: FakeRewinder | None = None) -> None:
        self.rewinder = rewinder or FakeRewinder()

    def transcript(self) -> list[Event]:
        return [e for turn in self.rewinder.events for e in turn]
