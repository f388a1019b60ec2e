"""What the rewind API hands back (the package re-exports every name: import from there)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

RewindMode = Literal["both", "code", "conversation"]
MODES: tuple[RewindMode, ...] = ("both", "code", "conversation")


class RewindError(RuntimeError):
    pass


class OutsideChanges(RewindError):
    def __init__(self, paths: list[str]) -> None:
        super().__init__(
            "changed outside the harness since that point (not overwritten): " + ", ".join(paths)
        )
        self.paths = paths


class TurnRunning(RewindError):
    pass


@dataclass(frozen=True)
class TurnEntry:
    turn: int
    point_id: str
    turn_id: str
    task: str
    time: str
    files_changed: int
    added: int
    removed: int
    current: bool
    at: str = "turn"  # or "command": just before the person's `!cmd` (Rewinder.entries)
    label: str = ""  # "3", or "3.1" for the first `!cmd` after turn 3

    def wire(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "task": self.task,
            "files_changed": self.files_changed,
            "time": self.time,
            "added": self.added,
            "removed": self.removed,
            "current": self.current,
        }


@dataclass(frozen=True)
class RewindPreview:
    turn: int
    mode: RewindMode
    changes: list[str]
    outside: list[str]
    messages_dropped: int


@dataclass(frozen=True)
class RewindResult:
    turn: int
    mode: RewindMode
    restored: list[str]
    removed: list[str]
    refused: list[str]
    kept: list[str]
    outside: list[str]
    history_len: int
    forward_point: str
    guarded: str = ""
