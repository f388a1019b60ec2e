"""At 80x24 (issue 15, item 10): the planner narrows and leaves the status bar its width, and the
approval dialog keeps its keys and countdown on screen while a long diff scrolls."""

from __future__ import annotations

from pathlib import Path

from textual.containers import VerticalScroll
from textual.geometry import Region

from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.app.widgets.status_bar import StatusBar

from .feeds import plan_events
from .helpers import AskInThread, FakeClock, arm, viewer_app, wait_until

SMALL = (80, 24)

#: A diff far taller than a 24-row terminal.
LONG_DIFF = "--- a/big.py\n+++ b/big.py\n@@ -1,60 +1,60 @@\n" + "".join(
    f"-old line {i}\n+new line {i}\n" for i in range(60)
)


def _inside(inner: Region, outer: Region) -> bool:
    return inner.height > 0 and outer.contains_region(inner)


async def test_at_80_columns_the_planner_narrows_and_the_status_bar_keeps_its_width(
    tmp_path: Path,
) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        plan_events(app.bus)
        await pilot.press("f2")
        planner = app.query_one("#planner")
        assert await wait_until(pilot, lambda: planner.region.width > 0)
        assert planner.region.width <= 34
        assert app.chat.region.width >= 44
        assert app.query_one(StatusBar).region.width == 80


async def test_at_80x24_the_approval_keys_and_countdown_stay_visible_over_a_long_diff(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = viewer_app(tmp_path, clock, approval_timeout_s=60)
    async with app.run_test(size=SMALL) as pilot:
        AskInThread(app, summary="big.py", tool="edit_file", diff=LONG_DIFF, paths=["big.py"])
        assert await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        screen = await arm(pilot, clock)
        await pilot.pause()
        dialog = screen.query_one("#dialog").region
        keys, countdown = screen.query_one("#keys"), screen.query_one("#countdown")
        diff = screen.query_one("#diff", VerticalScroll)
        assert _inside(keys.region, dialog) and _inside(countdown.region, dialog)
        assert _inside(diff.region, dialog)
        assert not diff.region.overlaps(keys.region.union(countdown.region))
        assert "approve once" in str(keys.render())
        assert "denies automatically in" in str(countdown.render())
        # The diff scrolls (it has focus once armed); the keys stay where they were.
        assert diff.max_scroll_y > 0 and app.focused is diff
        before = keys.region
        await pilot.press("pagedown", "pagedown")
        assert await wait_until(pilot, lambda: diff.scroll_y > 0)
        assert keys.region == before and _inside(keys.region, dialog)
