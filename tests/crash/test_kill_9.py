"""kill -9 at random points of a headless session (seeded), every invariant checked each time.

CRASH_RUNS and CRASH_SEED override the count and the first seed (a failure names its seed:
`CRASH_SEED=<seed> CRASH_RUNS=1` replays it alone). The figures are printed (pytest -s).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from .harness import crash_once

RUNS = int(os.environ.get("CRASH_RUNS", "50"))
FIRST_SEED = int(os.environ.get("CRASH_SEED", "1300"))


@pytest.mark.slow  # 50 sessions, one after another: 4 min on a loaded machine
def test_every_invariant_holds_after_kill_9_at_random_points(tmp_path: Path) -> None:
    started = time.monotonic()
    runs = [crash_once(tmp_path, seed) for seed in range(FIRST_SEED, FIRST_SEED + RUNS)]
    took = time.monotonic() - started
    undo = Counter(r.undo for r in runs)
    cut = sum(r.cut for r in runs)
    print(
        f"\nkill -9 harness: {len(runs)} runs in {took:.0f} s ({took / len(runs):.1f} s each); "
        f"{cut} cut a turn, {len(runs) - cut} after it ended or before it began; "
        f"{sum(r.full_access for r in runs)} without a sandbox; resumed {sum(r.resumed for r in runs)}; "
        f"undo {dict(undo)}; killed before the first event {sum(r.after_events < 0 for r in runs)}"
    )
    assert len(runs) == RUNS >= 1
    # The harness must have exercised the case it exists for, not only clean endings.
    assert RUNS < 20 or cut >= RUNS // 4
