from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApprovalDecision, ApprovalRequest
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import Session, build_session


class Person:
    """Answers every ask with one decision; records what was asked."""

    def __init__(self, decision: str = "approved_session") -> None:
        self.decision = decision
        self.asked: list[ApprovalRequest] = []

    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(req)
        return ApprovalDecision(self.decision, by="person")  # type: ignore[arg-type]


def open_session(
    ws: Path, url: str, *, resume: str | None = None, approver: Any = None
) -> tuple[Session, Recorder]:
    """A real session on the scripted server; `notes/**` writes ask first (a grant to hold)."""
    user = ws.parent / f"{ws.name}-user.toml"
    user.write_text('[[rules]]\npattern = "notes/**"\naction = "ask"\n')
    settings = load_settings(ws, flags={"approval": "on-request"}, environ={}, user_config=user)
    bus = Emitter()
    rec = Recorder(bus)
    session = build_session(
        settings, bus=bus, provider=LlamaProvider(url), resume=resume, approver=approver
    )
    return session, rec


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


@pytest.fixture(autouse=True)
def own_config_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The person's config dir (where the grant key lives) outside the workspace and the home."""
    home = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("CERVEAU_CONFIG", str(home / "config.toml"))
    return home


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The harness's cache dir, with the slot folder a managed server saves into."""
    d = tmp_path / "cache"
    monkeypatch.setenv("CERVEAU_CACHE_DIR", str(d))
    (d / "slots").mkdir(parents=True)
    return d
