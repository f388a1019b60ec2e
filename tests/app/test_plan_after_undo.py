"""After undo (a rewind of the last turn's code) the plan views show the reconciled report
(issue 15, item 11): the strip kept "1/2 done" while `cerveau report` said the step's file was
missing."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.plan_strip import PlanStrip
from cerveau_tui.app.widgets.planner import PlannerPanel
from cerveau_tui.bus import Recorder
from cerveau_tui.plan.report import build_report_at
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

from .feeds import plan_events
from .helpers import viewer_app, wait_until


async def test_undo_refreshes_the_strip_and_the_planner_to_what_the_report_says(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/calc.py").write_text("def add(a, b):\n    return a + b\n")
    digest = Fingerprinter(tmp_path).hash_file("src/calc.py")
    app = viewer_app(tmp_path)
    log = Recorder(app.bus)  # every event, as the session log holds them
    async with app.run_test(size=(140, 40)) as pilot:
        plan_events(app.bus, digest)
        app.bus.emit("turn_ended", {"reason": "completed", "iterations": 2})
        strip, planner = app.query_one(PlanStrip), app.query_one(PlannerPanel)
        assert await wait_until(pilot, lambda: strip.report is not None)
        assert await wait_until(pilot, lambda: strip.report.done_count == 1)
        # The person undoes the turn: the file the step created is gone again. No turn follows.
        (tmp_path / "src/calc.py").unlink()
        app.bus.emit("rewound", {"turn": 1, "mode": "code", "removed": ["src/calc.py"]})
        assert await wait_until(pilot, lambda: strip.report.missing_count == 1)
        assert strip.report is planner.report
        offline = build_report_at(log.events, tmp_path)  # what `cerveau report` computes
        assert [str(s.status) for s in strip.report.steps] == [str(s.status) for s in offline.steps]
        assert strip.report.done_count == 0
        assert "plan 0/3" in str(strip.render()) and "✕ 1 missing" in str(strip.render())
        assert "files missing" in str(planner.query_one("Static").render())
