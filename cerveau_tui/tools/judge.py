"""What the loop asks of the boundary about a tool's declaration (policy.Policy meets it).

A Protocol below the loop, so the engine and the dispatcher are typed against what they use, and
a test can hand them a fake judge without building a whole policy.
"""

from __future__ import annotations

from typing import Protocol

from ..policy.verdict import Verdict
from .base import Declared


class Judge(Protocol):
    def evaluate(self, tool: str, declared: Declared) -> Verdict:
        """allow / ask / deny for this declaration, now."""
        ...

    def after_failure(
        self, tool: str, declared: Declared, exit_code: int | None, output: str
    ) -> Verdict | None:
        """An ask to rerun a command refused by the sandbox with more room; None: nothing to offer."""
        ...

    def grant_session(self, verdict: Verdict) -> None:
        """The person approved this verdict's scope for the rest of the session."""
        ...
