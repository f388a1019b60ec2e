"""Test helpers: a clock tests move by hand, a bounded wait, and an app on a scripted server."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from cerveau_tui.app.app import CerveauApp, default_factory
from cerveau_tui.app.screens.armed import ALONE_AFTER_TYPING_S, QUIET_S, ArmedModal
from cerveau_tui.bus import Recorder
from cerveau_tui.config import Settings
from cerveau_tui.loop.approver import ApprovalDecision, ApprovalRequest

from .session_plan import SessionPlan


class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, s: float) -> None:
        self.t += s


async def wait_until(pilot: Pilot[Any], cond: Callable[[], bool], *, steps: int = 300) -> bool:
    """Poll a condition while the app runs (bounded; no timing is asserted)."""
    for _ in range(steps):
        if cond():
            return True
        await pilot.pause(0.05)
    return cond()


async def arm(pilot: Pilot[Any], clock: FakeClock) -> ArmedModal[Any]:
    """Let the keyboard be quiet long enough on the injected clock, tick, and wait until the
    dialog on screen has armed (its real keys drawn, then armed one refresh later)."""
    screen = pilot.app.screen
    assert isinstance(screen, ArmedModal), screen
    assert await wait_until(pilot, lambda: screen.on_screen)
    clock.advance(QUIET_S)
    screen.tick_arming()
    assert await wait_until(pilot, lambda: screen.armed)
    return screen


async def press_alone(pilot: Pilot[Any], clock: FakeClock, *keys: str) -> None:
    """Each key pressed on its own, as a person answering a dialog does: the dialog armed (quiet
    before), the key, then no other key for as long as any answer needs (quiet after: ALONE_S,
    or ALONE_AFTER_TYPING_S when the test typed just before) and a tick to notice it."""
    for key in keys:
        screen = await arm(pilot, clock)
        await pilot.press(key)
        clock.advance(ALONE_AFTER_TYPING_S)
        screen.tick_arming()
        await pilot.pause()


def viewer_app(tmp_path: Path, clock: FakeClock | None = None, **settings: Any) -> CerveauApp:
    """The app with no engine: tests feed events through `app.bus` (and the session's plan
    ledger follows them and sends its reports, as a session would: session_plan.py)."""
    s = Settings(workspace=tmp_path, **settings)
    app = CerveauApp(s, clock=clock or FakeClock(), save_setting=lambda k, v: None)
    SessionPlan(app.bus, tmp_path)
    return app


def engine_app(
    tmp_path: Path, url: str, clock: FakeClock | None = None, **settings: Any
) -> tuple[CerveauApp, Recorder]:
    """The real engine (build_session) against a scripted server, with a recorder on its bus."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    s = Settings(workspace=ws, server_url=url, **settings)
    app = CerveauApp(
        s,
        session_factory=default_factory(s),
        clock=clock or FakeClock(),
        save_setting=lambda k, v: None,
    )
    return app, Recorder(app.bus)


class AskInThread:
    """Ask the app's approver from another thread, as the engine does, and keep the answer."""

    def __init__(self, app: CerveauApp, summary: str = "rm -rf build", **fields: Any) -> None:
        self.req = ApprovalRequest(
            call_id=fields.pop("call_id", "c1"),
            tool=fields.pop("tool", "bash"),
            summary=summary,
            reason=fields.pop("reason", "writes outside the workspace"),
            **fields,
        )
        self.decision: ApprovalDecision | None = None
        approver = app.approver
        self.thread = threading.Thread(target=lambda: self._ask(approver), daemon=True)
        self.thread.start()

    def _ask(self, approver: Any) -> None:
        self.decision = approver.approve(self.req)


def child_pids() -> set[int]:
    """Live child processes of this test process, from /proc (no psutil needed)."""
    pids: set[int] = set()
    me = os.getpid()
    for task in Path(f"/proc/{me}/task").iterdir():
        try:
            text = (task / "children").read_text()
        except OSError:
            continue
        pids.update(int(p) for p in text.split())
    return {p for p in pids if Path(f"/proc/{p}").exists() and _state(p) != "Z"}


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


class FakeEngine:
    """The engine side of a fake session: every action a no-op."""

    def run(self, text: str) -> Any: ...
    def interrupt(self) -> None: ...
    def stop_thinking(self) -> None: ...
    def steer(self, text: str) -> None: ...
    def exec(self, command: str) -> str:
        return ""

    def compact(self) -> int:
        return 0


class FakeSession:
    """A session the app can start without a server; tests add what they need."""

    rewinder: Any = None  # none: the app says rewind is not available

    engine = FakeEngine()

    def close(self) -> None: ...
    def status(self) -> dict[str, Any]:
        return {"model": "m", "server_url": "http://x"}

    def set_network(self, on: bool) -> None: ...
    def set_discuss(self, on: bool) -> None: ...
    def session_grants(self) -> list[tuple[str, str]]:
        return []

    def revoke(self, scope_key: str) -> bool:
        return False

    def lasting_rules(self) -> list[tuple[str, str, str]]:
        return []

    def revoke_rule(self, scope_key: str) -> bool:
        return False
