"""Rewind: back to any earlier turn, the code, the conversation or both; and forward again.

How a rewind works, room by room:
    rewinder.py  the Rewinder: points taken from the bus, what can be rewound to, the API
    points.py    restore points (a manifest per turn start/end) and their records in the log
    perform.py   what a rewind does: the files, the log record, the live session
    cut.py       the one cut of the conversation (history, window, plan, grants) and its forward
    fold.py      that cut applied to a stored session (a resume folds the log's rewind records)
    live.py      that cut applied to the running engine (its History, window, plan ledger, policy)
    gc.py        the store's collector: what no kept point references goes
    types.py     the API's values and errors
"""

from __future__ import annotations

from .rewinder import Rewinder
from .types import OutsideChanges, RewindError, RewindMode, RewindPreview, RewindResult, TurnEntry

__all__ = [
    "OutsideChanges",
    "RewindError",
    "RewindMode",
    "RewindPreview",
    "RewindResult",
    "Rewinder",
    "TurnEntry",
]
