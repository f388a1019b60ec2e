"""How the app's session comes to be: the factory the engine thread calls, and the collector's
tuning, apart from app.py (the shell) so each reads on its own. app.py re-exports both.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..bus import Emitter
from ..config import Settings
from ..loop.approver import BusApprover
from .runner import StartupProgress

if TYPE_CHECKING:
    from ..session import Session

#: What the app is given to build its session on the engine thread.
SessionFactory = Callable[[Emitter, BusApprover, StartupProgress], "Session"]


def tune_gc() -> None:
    """Collect young garbage less often. Textual makes many short-lived cyclic objects per frame,
    and with the default threshold (700) a collection ran every few frames while streaming; with
    this and a full collection at each turn's end (routing.py, on `TurnEnded`) the measured p99 key latency at
    1,000 tokens/s fell from ~200-300 ms to 30-90 ms (benchmarks/tui_bench.py latency)."""
    gc.set_threshold(20_000, 10, 10)


def default_factory(settings: Settings, resume: str | None = None) -> SessionFactory:
    def factory(bus: Emitter, approver: BusApprover, progress: StartupProgress) -> Session:
        from ..session import build_session

        if settings.server_url:
            # Nothing says "ready" before the server answered: a dead URL shows "disconnected"
            # and is tried again until it answers or the person quits (the runner's sleep wakes).
            from ..stack.server import wait_until_answers

            wait_until_answers(settings.server_url, progress, sleep=progress.sleep)
        return build_session(settings, bus=bus, approver=approver, progress=progress, resume=resume)

    return factory
