"""What the app does with the person's answer to the trust dialog (screens/trust.py), kept out of
app.py and free of widgets so each outcome is a plain function of (answer, settings, hooks).

The session is built only after the answer, from the settings the answer chose: with the file
trusted, config.py is asked again with the SAME flags (a `--sandbox read-only` on the command
line must still win over the file), and the session factory is rebuilt from those settings.
When the app was not given a way to reload (`reload` is None, e.g. the caller did not pass its
flags through), the trust is recorded but this session keeps the safer values and says so: a
reload without the flags could undo a protection the person asked for on the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings, trust_workspace_config
from ..redact import redact_url


@dataclass
class TrustHooks:
    record: Callable[[Path, str], object] = trust_workspace_config
    reload: Callable[[], Settings] | None = None  # load_settings(workspace, flags=<same flags>)
    factory_for: Callable[[Settings], Any] | None = None  # settings -> app.SessionFactory


@dataclass
class TrustOutcome:
    settings: Settings
    factory: Any = None  # a new app.SessionFactory, or None: keep the one the app has
    notices: list[tuple[str, str]] = field(default_factory=list)  # (text, level)


def in_force(s: Settings) -> str:
    server = redact_url(s.server_url or "") or "the managed llama-server"
    return (
        f"in force: sandbox {s.sandbox}, approval {s.approval}, "
        f"network {'on' if s.network else 'off'}, server {server}"
    )


def review_of(s: Settings) -> list[str]:
    # getattr: Settings without the review fields (an older config.py) have nothing to review.
    return [str(x) for x in getattr(s, "workspace_review", None) or []]


def startup_notices(s: Settings) -> list[tuple[str, str]]:
    """Lowerings already trusted earlier are applied silently by config.py: say them at start."""
    lowered = [str(x) for x in getattr(s, "workspace_lowered", None) or []]
    if not lowered:
        return []
    return [
        (
            f"workspace config (trusted earlier) applies: {'; '.join(lowered)}. {in_force(s)}",
            "warning",
        )
    ]


def answer(trusted: bool, settings: Settings, hooks: TrustHooks) -> TrustOutcome:
    review = review_of(settings)
    listed = "; ".join(review)
    if not trusted:
        return TrustOutcome(
            settings,
            notices=[(f"workspace config NOT applied ({listed}). {in_force(settings)}", "warning")],
        )
    digest = str(getattr(settings, "workspace_config_digest", "") or "")
    try:
        hooks.record(settings.workspace, digest)
    except Exception as exc:  # an unwritable config dir: the answer cannot be kept
        return TrustOutcome(
            settings,
            notices=[
                (f"could not record the trust ({exc}); not applied. {in_force(settings)}", "error")
            ],
        )
    if hooks.reload is None or hooks.factory_for is None:
        return TrustOutcome(
            settings,
            notices=[
                (
                    f"workspace config trusted; it applies from the next start ({listed}). "
                    f"This session: {in_force(settings)}",
                    "warning",
                )
            ],
        )
    try:
        fresh = hooks.reload()
    except Exception as exc:  # the file became invalid between the dialog and now
        return TrustOutcome(
            settings,
            notices=[(f"could not reload the settings ({exc}). {in_force(settings)}", "error")],
        )
    if review_of(fresh):
        # The digest no longer matches: the file changed after it was shown. Its new contents
        # were never reviewed, so nothing it lowers applies.
        return TrustOutcome(
            settings,
            notices=[
                (
                    f"{settings.workspace_config_path} changed after it was shown; not applied. "
                    f"{in_force(settings)}",
                    "error",
                )
            ],
        )
    return TrustOutcome(
        fresh,
        factory=hooks.factory_for(fresh),
        notices=[
            (f"workspace config trusted and applied ({listed}). {in_force(fresh)}", "warning")
        ],
    )
