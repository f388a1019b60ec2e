"""What one session's engine owns across turns, in one object the turn and its parts are handed.

Before, these were the engine's private fields and the turn, the dispatcher and the model call
reached into them (`e._cancel`, `e._task`, `e._take_steer`); now each part names what it uses.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..context.window import WindowState
from ..history import History
from ..protocol import StopReason
from ..provider.types import Usage
from ..tools.base import ToolState
from .cache_ledger import CacheLedger

#: How many failed calls the resume brief can draw on: enough to say "this already failed".
KEPT_FAILURES = 10


@dataclass
class EngineState:
    # The conversation: appended only through History.append (cerveau_tui/history.py), which
    # the session log listens to.
    history: History = field(default_factory=History)
    tools: ToolState = field(default_factory=ToolState)  # the write count and paths tools share
    cancel: threading.Event = field(default_factory=threading.Event)
    task: str = ""  # the current turn's input, for the resume brief
    failures: list[str] = field(default_factory=list)  # recent failed calls, for the resume brief
    # The compacted block and where the verbatim tail starts (context/window.py); the history
    # itself stays append-only.
    window: WindowState = field(default_factory=WindowState)
    cache: CacheLedger = field(default_factory=CacheLedger)  # the previous request's figures
    _steer: list[str] = field(default_factory=list)
    _steer_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def cancelled(self) -> bool:
        return self.cancel.is_set()

    def add_steer(self, text: str) -> None:
        """Thread-safe: the person typed while a turn ran."""
        with self._steer_lock:
            self._steer.append(text)

    def take_steer(self) -> list[str]:
        with self._steer_lock:
            out, self._steer = self._steer, []
        return out

    def note_failure(self, line: str) -> None:
        self.failures = [*self.failures[-(KEPT_FAILURES - 1) :], line]


@dataclass
class Limits:
    max_iterations: int = 0  # zero: the family default
    max_identical_calls: int = 3
    max_turn_tokens: int = 0  # zero: no ceiling


@dataclass
class Outcome:
    turn_id: str
    reason: StopReason
    iterations: int
    usage: Usage = field(default_factory=Usage)
    context_tokens: int = 0
    message: str = ""
