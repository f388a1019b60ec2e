"""What the policy answers for one tool call."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ..sandbox.base import Grant
from .scopes import scoped_room

Action = Literal["allow", "ask", "deny"]


@dataclass
class Verdict:
    """allow / ask / deny, with a reason a person can read ("writes /etc/x, outside the workspace").

    `grant` is the room to run the ONE command with: on `allow` the room it already has (the
    network when the person granted it), on `ask` the room an approval would add (an extra writable
    path, or the network), never "unsandboxed". `scope` spells out what "approve for session" would
    cover and `scope_key` is its machine key (for `Policy.grant_session` / `revoke`); both are
    structural (scopes.py), so a grant covers exactly what it says.
    """

    action: Action
    reason: str
    grant: Grant | None = None
    scope: str = ""
    scope_key: str = ""
    session: bool = False  # allowed because the person approved this scope for the session
    # Which grant or lasting rule let it through, spelled out (the card and tool_result say it).
    granted_by: str = ""
    # Every scope the person could approve, (scope_key, scope) narrowest first; `scope` is one.
    choices: tuple[tuple[str, str], ...] = ()

    def choose(self, scope_key: str) -> Verdict:
        """This verdict with the person's chosen scope (one of `choices`); itself otherwise. A
        host-scoped choice runs this call with the network to that host only, as it will the next."""
        for key, label in self.choices:
            if key == scope_key:
                grant = scoped_room(key, self.grant) if self.grant is not None else None
                return replace(self, scope=label, scope_key=key, grant=grant)
        return self

    @property
    def allowed(self) -> bool:
        return self.action == "allow"
