"""`cerveau rules [--json] [--revoke SCOPE]`: the person's lasting rules, listed and taken back."""

from __future__ import annotations

import json
from pathlib import Path

from .rules_store import LastingRules, all_rules


def rules_command(workspace: Path, as_json: bool, revoke: str | None) -> tuple[int, str]:
    """(exit code, text). Every sealed rule of every workspace is listed (what is not sealed
    with the person's key is not a rule, and is not shown as one)."""
    if revoke is not None:
        if LastingRules(workspace).revoke(revoke):
            return 0, f"revoked: {revoke}"
        return 1, f"no rule for `{revoke}` in {workspace}"
    rules = all_rules()
    rows = [
        {
            "scope": r.scope,
            "scope_key": r.scope_key,
            "decision": r.decision,
            "workspace": r.workspace,
        }
        for r in rules
    ]
    if as_json:
        return 0, json.dumps(rows, indent=1)
    if not rows:
        return 0, 'no lasting rules (choose "always" or "never" in an approval dialog)'
    lines = [
        f"{'always' if r['decision'] == 'allow' else 'never ':6}  {r['scope']}  ({r['workspace']})"
        for r in rows
    ]
    return 0, "\n".join(lines)
