"""One line at the top saying what is in force: the sandbox mode and its backend, the approval
policy, autopilot or discussion, native or constrained actions, whether the server is this app's
own or shared, the model and its n_ctx.

Tried as a new user would, none of it was on screen: which sandbox mode or approval policy ran was
a guess. Until the session is built it says what it waits for, never "ready" (the server answers
first, app.py's factory waits for it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.content import Content
from textual.widgets import Static

from ...config import Settings


@dataclass
class HeaderFacts:
    sandbox: str = ""
    approval: str = ""
    discuss: bool = False
    backend: str = ""  # "" until the session says which enforcement runs
    enforced: bool | None = None
    gaps: int = 0  # what the backend cannot hold (session_started.sandbox.gaps; doctor lists them)
    actions: str = ""  # native | constrained (auto resolved by the server's template)
    own_server: bool | None = None  # None: not known yet
    model: str = ""
    n_ctx: int = 0
    waiting_for: str = "the session"


def facts_of(settings: Settings, status: dict[str, Any] | None) -> HeaderFacts:
    f = HeaderFacts(sandbox=settings.sandbox, approval=settings.approval, discuss=settings.discuss)
    if status is None:
        f.waiting_for = settings.server_url or "the local model"
        return f
    f.backend = str(status.get("sandbox_backend") or "")
    enforced = status.get("sandbox_enforced")
    f.enforced = None if enforced is None else bool(enforced)
    f.gaps = int(status.get("sandbox_gaps") or 0)
    f.actions = str(status.get("action_mode") or "")
    f.own_server = bool(status.get("managed"))
    model = str(status.get("model") or "")
    f.model = model[:-5] if model.endswith(".gguf") else model
    f.n_ctx = int(status.get("n_ctx") or 0)
    return f


def header_content(f: HeaderFacts) -> Content:
    """Most important first: a narrow terminal cuts the model's name (the status bar has it)."""
    parts: list[tuple[str, str] | str] = []

    def sep() -> None:
        parts.append((" │ ", "$text-muted"))

    backend = f" ({f.backend}{'' if f.enforced is not False else ', NOT enforced'})"
    parts.append((f"sandbox {f.sandbox}{backend if f.backend else ''}",
                  "bold $text-error" if f.enforced is False else "$text-success"))  # fmt: skip
    if f.gaps and f.enforced:
        parts.append((f" {f.gaps} gap{'s' if f.gaps != 1 else ''}", "$text-error"))
    sep()
    parts.append(f"approval {f.approval}")
    sep()
    parts.append(("discussion: read and plan only", "$text-warning") if f.discuss else "autopilot")
    sep()
    if f.own_server is None:
        parts.append((f"waiting for {f.waiting_for}", "$text-muted"))
        return Content.assemble(*parts)
    parts.append(f"{f.actions} actions" if f.actions else ("actions ?", "$text-muted"))
    sep()
    parts.append("own server" if f.own_server else "shared server")
    sep()
    parts.append((f.model or "model ?", "bold"))
    if f.n_ctx:
        parts.append((f" n_ctx {f.n_ctx:,}", "$text-muted"))
    return Content.assemble(*parts)


class SessionHeader(Static):
    DEFAULT_CSS = """
    SessionHeader { dock: top; height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__("", id="session-header", markup=False)
        self.facts = HeaderFacts()
        self._status: dict[str, Any] | None = None

    def show(self, settings: Settings, status: dict[str, Any] | None = None) -> None:
        """The session's status once it is built; without one, the settings again (discussion
        mode switched, the trust dialog answered) over the status already known."""
        if status is not None:
            self._status = dict(status)
        self.facts = facts_of(settings, self._status)
        self.update(header_content(self.facts))
