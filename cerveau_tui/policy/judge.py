"""What the loop, the session and the UI ask of the boundary: the policy, as a Protocol.

Typed against what they use, so nobody probes the policy for a method (a probe for `revoke`
answered "nothing held" for a policy that had simply lost the method, and a wrapper forwarding
the rest by name hid which methods existed at all), and a test can hand the engine a fake judge
without building a whole policy. policy.Policy meets it.
"""

from __future__ import annotations

from typing import Literal, Protocol

from ..tools.base import Declared
from .verdict import Verdict


class Judge(Protocol):
    def evaluate(self, tool: str, declared: Declared) -> Verdict:
        """allow / ask / deny for this declaration, now."""
        ...

    def after_failure(
        self, tool: str, declared: Declared, exit_code: int | None, output: str
    ) -> Verdict | None:
        """An ask to rerun a command the sandbox refused, with more room (rerun.py); None:
        nothing to offer."""
        ...

    # -- the person's answers given in advance --------------------------------------------------
    def grant_session(self, verdict: Verdict) -> None:
        """The person approved this verdict's scope for the rest of the session."""
        ...

    def keep_rule(self, verdict: Verdict, decision: Literal["allow", "deny"]) -> bool:
        """ "Always" or "never" in this workspace, kept outside it; False: no store to keep it in
        (the caller then grants for the session)."""
        ...

    def session_scopes(self) -> list[tuple[str, str]]:
        """(scope_key, scope spelled out) of each session grant in force, in grant order."""
        ...

    def revoke(self, scope_key: str) -> bool:
        """Take back a session grant; False if none was held."""
        ...

    def lasting_rules(self) -> list[tuple[str, str, str]]:
        """(scope_key, scope, "allow" | "deny") of this workspace's lasting rules."""
        ...

    def revoke_rule(self, scope_key: str) -> bool:
        """Take back a lasting rule, in this session and the next; False if there was none."""
        ...


class GrantListener(Protocol):
    """Told of each session grant and revoke as it happens: the session's journal, whose log must
    hold them for a resume. Told by the policy itself, not at events: the dispatcher grants after
    `approval_resolved` is out, so a snapshot taken there would miss the grant it resolved."""

    def granted(self, verdict: Verdict) -> None: ...

    def revoked(self, scope_key: str) -> None: ...
