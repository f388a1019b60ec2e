"""The plan strip and the planner panel render ONE report, so they agree by construction."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.plan_strip import PlanStrip
from cerveau_tui.app.widgets.planner import PlannerPanel
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

from .feeds import plan_events
from .helpers import viewer_app, wait_until


async def test_strip_and_planner_show_the_same_report_after_a_guard_cut_a_step_short(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "src/calc.py").write_text("def add(a, b):\n    return a + b\n")
    digest = Fingerprinter(tmp_path).hash_file("src/calc.py")
    app = viewer_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        plan_events(app.bus, digest)
        # step 2 wrote its file, then a guard stopped the turn before it was marked done
        (tmp_path / "tests/test_calc.py").write_text("def test_add(): assert True\n")
        app.bus.emit(
            "tool_result",
            {
                "call_id": "w",
                "name": "write_file",
                "ok": True,
                "output": "",
                "wrote": ["tests/test_calc.py"],
                "status": "done",
            },
        )
        app.bus.emit("guard_tripped", {"guard": "stall", "reason": "no progress", "iteration": 4})
        # and the person edited step 1's file after its checkpoint
        (tmp_path / "src/calc.py").write_text("def add(a, b):\n    return b + a\n")
        app.bus.emit("turn_ended", {"reason": "stalled", "iterations": 4})
        strip, planner = app.query_one(PlanStrip), app.query_one(PlannerPanel)
        assert await wait_until(pilot, lambda: strip.report is not None and strip.report.total == 3)
        await pilot.press("f2")
        assert strip.report is planner.report
        statuses = [str(s.status) for s in planner.report.steps]
        assert statuses == ["changed", "done_unconfirmed", "pending"]
        strip_text = str(strip.render())
        panel_text = str(planner.query_one("Static").render())
        assert "plan 2/3" in strip_text and "△ 1 changed since checkpoint" in strip_text
        assert (
            "changed since checkpoint" in panel_text and "done on disk, not confirmed" in panel_text
        )
        assert "▸ 3. Update the changelog" in strip_text
        assert planner.has_class("-open")
