"""One line at the top saying what is in force: the sandbox mode and its backend, the approval
policy, autopilot or discussion, native or constrained actions, whether the server is this app's
own or shared, the grants in force (the person's "approve for this session" and lasting rules),
the model and its n_ctx.

Tried as a new user would, none of it was on screen: which sandbox mode or approval policy ran was
a guess. Until the session is built it says what it waits for, never "ready" (the server answers
first, app.py's factory waits for it).

At 80 columns it was cut after `autopilot │`: the action mode and the server were past the edge.
Narrow, each part takes its short form and the line wraps (fit.py); only the model's name, which
the status bar also shows, gives way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.content import Content
from textual.widgets import Static

from ...config import Settings
from ...redact import redact_url
from .fit import Part, fit_lines

#: The backends' names as a narrow header spells them.
SHORT_BACKENDS = {"bubblewrap": "bwrap"}
#: Grants listed in the header before "and N more" (the palette lists and revokes every one).
GRANTS_SHOWN = 3


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
    # Each grant in force, as its scope spells it; not compared: app.py redraws on other facts.
    grants: tuple[str, ...] = field(default=(), compare=False)


def facts_of(settings: Settings, status: dict[str, Any] | None) -> HeaderFacts:
    f = HeaderFacts(sandbox=settings.sandbox, approval=settings.approval, discuss=settings.discuss)
    if status is None:
        # The person's own screen: whose credential is configured, never its value.
        f.waiting_for = redact_url(settings.server_url or "", person=True) or "the local model"
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


def grants_text(grants: tuple[str, ...]) -> str:
    shown = "; ".join(grants[:GRANTS_SHOWN])
    more = f" and {len(grants) - GRANTS_SHOWN} more" if len(grants) > GRANTS_SHOWN else ""
    return f"grant{'s' if len(grants) != 1 else ''}: {shown}{more}"


def header_parts(f: HeaderFacts) -> list[Part]:
    """Most important first; only the model's name is ranked (dropped when narrow)."""
    broken = f.enforced is False
    style = "bold $text-error" if broken else "$text-success"
    tail = "" if not broken else ", NOT enforced"
    full = f"sandbox {f.sandbox}" + (f" ({f.backend}{tail})" if f.backend else "")
    short = f.sandbox + (
        f" ({SHORT_BACKENDS.get(f.backend, f.backend)}{tail})" if f.backend else ""
    )
    gaps = f" {f.gaps} gap{'s' if f.gaps != 1 else ''}" if f.gaps and f.enforced else ""
    parts = [
        Part(full, style, short, after=gaps, after_style="$text-error"),
        Part(f"approval {f.approval}", short=f"ask: {f.approval}"),
    ]
    if f.discuss:
        parts.append(Part("discussion: read and plan only", "$text-warning", "discussion"))
    else:
        parts.append(Part("autopilot"))
    grants = [Part(grants_text(f.grants), "$text-warning")] if f.grants else []
    if f.own_server is None:
        return [*parts, Part(f"waiting for {f.waiting_for}", "$text-muted"), *grants]
    if f.actions:
        parts.append(Part(f"{f.actions} actions", short=f.actions))
    else:
        parts.append(Part("actions ?", "$text-muted"))
    parts.append(Part("own server" if f.own_server else "shared server"))
    parts.extend(grants)
    model = (f.model or "model ?") + (f" n_ctx {f.n_ctx:,}" if f.n_ctx else "")
    parts.append(Part(model, "bold", rank=1))
    return parts


def header_content(f: HeaderFacts, width: int | None = None) -> Content:
    """The header's lines for `width` columns (None: one line, as wide as it is)."""
    lines = fit_lines(header_parts(f), width)
    return Content("\n").join(lines) if len(lines) > 1 else lines[0]


class SessionHeader(Static):
    DEFAULT_CSS = """
    SessionHeader { dock: top; height: auto; max-height: 4; background: $panel;
                    color: $foreground; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__("", id="session-header", markup=False)
        self.facts = HeaderFacts()
        self._status: dict[str, Any] | None = None
        self._grants: tuple[str, ...] = ()

    def show(self, settings: Settings, status: dict[str, Any] | None = None) -> None:
        """The session's status once it is built; without one, the settings again (discussion
        mode switched, the trust dialog answered) over the status already known."""
        if status is not None:
            self._status = dict(status)
        self.facts = facts_of(settings, self._status)
        self.facts.grants = self._grants
        self._draw()

    def show_grants(self, grants: list[str] | tuple[str, ...]) -> None:
        """The grants in force, each as its scope spells it (read from the event or the
        session, never rebuilt here: the policy names its scopes)."""
        self._grants = tuple(dict.fromkeys(g for g in grants if g))
        if self._grants != self.facts.grants:
            self.facts.grants = self._grants
            self._draw()

    def grant(self, scope: str) -> None:
        self.show_grants((*self._grants, scope))

    def on_resize(self) -> None:
        self._draw()

    def on_mount(self) -> None:
        self.call_after_refresh(self._draw)

    def _draw(self) -> None:
        width = self.content_size.width if self.is_attached else 0
        if not width and self.is_attached:
            # Not laid out yet: an unfitted line would wrap at whatever width comes, and which
            # of the two a screen shows would depend on the machine's load. Drawn once it is.
            self.call_after_refresh(self._draw_laid_out)
        self.update(header_content(self.facts, width or None))

    def _draw_laid_out(self) -> None:
        if self.content_size.width:
            self.update(header_content(self.facts, self.content_size.width))
