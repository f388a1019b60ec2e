"""Lets the guard tests (and benchmarks/guard_stops.py) share copycat_sessions.py under
--import-mode=importlib, which puts no test folder on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
