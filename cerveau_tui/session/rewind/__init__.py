"""Rewind: back to any earlier turn, the code, the conversation or both; and forward again.

How a rewind works, room by room:
    rewinder.py  the Rewinder: points taken from the bus, what can be rewound to, the API
    points.py    restore points (a manifest per turn start/end) and their records in the log
    perform.py   what a rewind does: the files, the log record, the live session
    fold.py      the cut of the conversation (a resume folds the log; a live rewind cuts History)
    live.py      the live session's plan, window and grants following the cut
    gc.py        the store's collector: what no kept point references goes
    types.py     the API's values and errors
"""

from __future__ import annotations

from .rewinder import Rewinder
from .types import (
    MODES,
    OutsideChanges,
    RewindError,
    RewindMode,
    RewindPreview,
    RewindResult,
    TurnEntry,
    TurnRunning,
)

__all__ = [
    "MODES",
    "OutsideChanges",
    "RewindError",
    "RewindMode",
    "RewindPreview",
    "RewindResult",
    "Rewinder",
    "TurnEntry",
    "TurnRunning",
]
