"""The verdict on a ToolAction (an MCP server's tool): what it is decides, not what it touches.

A stdio server runs inside the sandbox, so what a call can reach is bounded like a command's;
what it does there (commit, delete a ticket, post a message) is the server's to decide, and its
own `readOnlyHint` is its claim, not trust. So a call asks unless the person marked the tool
read-only in their config; a remote server's call sends its arguments to another machine, a
network crossing asked for whatever the marking. Scopes by server and tool (`mcp:SERVER/TOOL`,
`mcp:SERVER`) let "approve for session" and "always/never" cover exactly that.
"""

from __future__ import annotations

from ..config import ApprovalPolicy, SandboxMode
from ..tools.base import ToolAction
from .grants import GrantBook
from .verdict import Verdict


def action_verdict(
    action: ToolAction, grants: GrantBook, mode: SandboxMode, approval: ApprovalPolicy
) -> Verdict:
    for key, _ in action.scopes:
        never = grants.denied(None, key, [])
        if never is not None:
            return Verdict("deny", f"you set this to never in this workspace ({never})")
    crossings: list[str] = []
    if mode != "full-access":
        if action.remote:
            crossings.append(f"sends its arguments to {action.remote}, a remote MCP server")
        if not action.read_only:
            crossings.append(
                f"{action.summary} is not marked read-only in your config (it may change what "
                "its server reaches)"
            )
    if not crossings:
        why = "marked read-only in your config" if action.read_only else "full-access mode"
        return Verdict("allow", f"{action.summary}: {why}")
    reason = "; ".join(crossings)
    key, scope = action.scopes[0]
    held = next((k for k, _ in action.scopes if grants.covers_file(k, None)), None)
    if held is not None:
        by = grants.label(held)
        v = Verdict("allow", f"{reason} — {by}", None, scope, key, True)
        v.granted_by, v.choices = by, action.scopes
        return v
    if approval == "never":
        return Verdict(
            "deny", f"{reason} — approval policy `never` denies crossings", None, scope, key
        )
    v = Verdict("ask", reason, None, scope, key)
    v.choices = action.scopes
    return v
