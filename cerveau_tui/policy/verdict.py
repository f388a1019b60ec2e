"""What the policy answers for one tool call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..sandbox.base import Grant

Action = Literal["allow", "ask", "deny"]


@dataclass
class Verdict:
    """allow / ask / deny, with a reason a person can read ("writes /etc/x, outside the workspace").

    `grant` is the room to run the ONE command with: on `allow` the room it already has (the
    network when the person granted it), on `ask` the room an approval would add (an extra writable
    path, or the network), never "unsandboxed". `scope` spells out what "approve for session" would
    cover and `scope_key` is its machine key (for `Policy.grant_session` / `revoke`).
    """

    action: Action
    reason: str
    grant: Grant | None = None
    scope: str = ""
    scope_key: str = ""
    session: bool = False  # allowed because the person approved this scope for the session

    @property
    def allowed(self) -> bool:
        return self.action == "allow"
