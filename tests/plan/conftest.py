from __future__ import annotations

from typing import Any

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.protocol import Event


class Session:
    """A real bus and a recorder: the events a test writes are the events the report reads."""

    def __init__(self) -> None:
        self.bus = Emitter("test")
        self.rec = Recorder(self.bus)

    @property
    def events(self) -> list[Event]:
        return list(self.rec.events)

    def commit(self, *steps: dict[str, Any], source: str = "tool", **extra: Any) -> None:
        self.bus.emit("plan_committed", {"source": source, "steps": list(steps), **extra})

    def update(self, step_id: str, status: str, note: str | None = None) -> None:
        self.bus.emit("plan_updated", {"step_id": step_id, "status": status, "note": note})

    def checkpoint(self, step_id: str, hashes: dict[str, str | None]) -> None:
        self.bus.emit("checkpoint", {"step_id": step_id, "hashes": hashes})

    def wrote(self, *paths: str, ok: bool = True) -> None:
        self.bus.emit(
            "tool_result",
            {"call_id": "c", "name": "write_file", "ok": ok, "output": "", "wrote": list(paths)},
        )


@pytest.fixture
def session() -> Session:
    return Session()
