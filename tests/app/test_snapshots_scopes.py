"""Snapshots of the approval dialog with each scope chosen, at 80x24 and 140x45 (SVGs in the
top-level snapshots/ folder): the numbered scopes, narrowest first, the chosen one marked, and
the keys that grant, keep or refuse it. Accept new ones with `--snapshot-update` after reading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.app.screens.approval import ApprovalScreen

from .helpers import AskInThread, FakeClock, arm, press_alone, viewer_app, wait_until

SIZES = [(80, 24), (140, 45)]
COMMAND = "curl -s -m 3 http://127.0.0.1:8080/one; true"
COMMAND_CHOICES = [
    (f"exact:{COMMAND}", f"exactly `{COMMAND}`"),
    ("command:curl@127.0.0.1:8080", "commands starting with `curl` to 127.0.0.1:8080 only"),
    ("command:curl", "commands starting with `curl`, any host"),
]
FOLDER_CHOICES = [
    ("write:/var/tmp/out/a.txt", "writes to /var/tmp/out/a.txt"),
    ("dir:/var/tmp/out", "file tools writing under /var/tmp/out"),
]


def _app(tmp_path: Path) -> Any:
    (tmp_path / "ws").mkdir(exist_ok=True)
    app = viewer_app(tmp_path / "ws", FakeClock(), approval_timeout_s=60)
    app.animation_level = "none"
    return app


async def _settle(pilot: Any) -> None:
    await pilot.pause(0.2)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.1)


def _snap(snap_compare: Any, tmp_path: Path, size: tuple[int, int], chosen: int, **ask: Any):
    app = _app(tmp_path)

    async def run_before(pilot: Any) -> None:
        AskInThread(app, **ask)
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await _settle(pilot)
        await press_alone(pilot, app.clock, str(chosen))
        await arm(pilot, app.clock)
        await _settle(pilot)

    return snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("chosen", [1, 2, 3])
def test_command_dialog_with_each_scope(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int], chosen: int
) -> None:
    assert _snap(
        snap_compare,
        tmp_path,
        size,
        chosen,
        summary=COMMAND,
        reason="uses the network",
        scope=COMMAND_CHOICES[-1][1],
        choices=COMMAND_CHOICES,
    )


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("chosen", [1, 2])
def test_outside_write_dialog_with_each_scope(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int], chosen: int
) -> None:
    assert _snap(
        snap_compare,
        tmp_path,
        size,
        chosen,
        summary="/var/tmp/out/a.txt",
        tool="write_file",
        reason="writes outside the workspace",
        paths=["/var/tmp/out/a.txt"],
        scope=FOLDER_CHOICES[0][1],
        choices=FOLDER_CHOICES,
    )
