"""What the approval dialog offers a grant to cover, and the lines it shows and leaves.

A request carries every scope the policy could grant, narrowest first (`choices`: the exact
command, the program to one host, the program; the file, its folder). Offering only one of them
made `a` either too narrow to be worth giving (a whole command line) or broader than the person
meant (any host): so the dialog lists them, numbered, and the person picks one with its number
(a key like any other answer: alone, armed.py). `a`, `A` and `N` then grant, keep or refuse
exactly the chosen one; the chat line and `approval_resolved.scope` name it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.content import Content

from ...loop.approver import ApprovalDecision
from ...text_safety import visible

#: Number keys that choose a scope (`1` the narrowest). The policy offers at most three today.
MAX_CHOICES = 5
_KEY = "bold $text-accent"


@dataclass(frozen=True)
class ScopeChoices:
    """The scopes a request offers, (scope_key, scope) narrowest first, and the one preselected
    (the policy's own default: the request's `scope`)."""

    options: tuple[tuple[str, str], ...]
    default: int

    @classmethod
    def of(cls, head: dict[str, Any]) -> ScopeChoices:
        raw = head.get("choices") or []
        options = tuple(
            (str(c[0]), str(c[1])) for c in raw if isinstance(c, (list, tuple)) and len(c) == 2
        )[:MAX_CHOICES]
        if not options:
            return cls(((str(head.get("scope_key") or ""), default_scope(head)),), 0)
        labels = [label for _, label in options]
        scope = str(head.get("scope") or "")
        return cls(options, labels.index(scope) if scope in labels else len(options) - 1)

    @property
    def several(self) -> bool:
        return len(self.options) > 1

    def key(self, index: int) -> str:
        return self.options[index][0]

    def label(self, index: int) -> str:
        return self.options[index][1]


def default_scope(head: dict[str, Any]) -> str:
    return str(head.get("scope") or head.get("summary") or "this request")


def keys_content(choices: ScopeChoices, chosen: int, outside_turn: bool = False) -> Content:
    """The dialog's keys: the one-call answers, then the broad ones for the chosen scope. Short
    lines: at 80 columns the dialog has 66 for them, and a key cut from its meaning misleads."""
    scope = choices.label(chosen)
    deny = Content.assemble(
        ("n", _KEY),
        " deny (type a reason, then Enter)    ",
        ("Esc", _KEY),
        # The person's own `!cmd` runs outside any turn: there is none to stop (issue 33).
        " deny, not run" if outside_turn else " deny and stop the turn",
    )
    if not choices.several:
        return Content.assemble(
            ("y", _KEY),
            " approve once    ",
            ("a", _KEY),
            f" approve for this session: {scope} ",
            ("(then a again)\n", "$text-muted"),
            deny,
            "\n",
            ("A", _KEY),
            " always here    ",
            ("N", _KEY),
            " never here ",
            ("(lasting, in this workspace)", "$text-muted"),
        )
    rows = [
        Content.assemble(
            ("▸ " if i == chosen else "  ", _KEY),
            (str(i + 1), _KEY),
            "  ",
            (label, "bold" if i == chosen else ""),
        )
        for i, (_, label) in enumerate(choices.options)
    ]
    return Content.assemble(
        ("y", _KEY),
        " approve once    ",
        ("a", _KEY),
        " this session    ",
        ("A", _KEY),
        " always here    ",
        ("N", _KEY),
        " never here\n",
        deny,
        "\n",
        (
            f"a, A, N for the scope chosen (1-{len(choices.options)}; each: the key again):",
            "$text-muted",
        ),
        "\n",
        Content("\n").join(rows),
    )


#: What each broad answer asks before it is given: the same key again, alone.
_CONFIRM = {
    "approved_session": ("a", "approve for the rest of this session"),
    "approved_always": ("A", "ALWAYS allow in this workspace (kept after this session)"),
    "denied_always": ("N", "NEVER allow in this workspace (kept after this session)"),
}
BROAD = frozenset(_CONFIRM)


def confirm_content(decision: str, scope: str) -> Content:
    key, what = _CONFIRM[decision]
    return Content.assemble(
        (key, _KEY),
        f" again, alone: {what}: ",
        (scope, "bold"),
        "\n",
        ("any other key", _KEY),
        " back (nothing decided)",
    )


def resolved_line(
    head: dict[str, Any], decision: ApprovalDecision, scope: str
) -> tuple[str, str] | None:
    """The chat line a decision leaves: a grant nobody can see afterwards is one nobody can
    revoke, and a "never" nobody can see is a refusal nobody can explain. None: no line."""
    # The model wrote the summary: its terminal controls are shown, never sent (text_safety).
    what = visible(f"{head.get('tool', '?')}: {head.get('summary') or ''}".strip())
    shown = visible(scope)
    if decision.decision == "approved_always":
        return f"you approved always in this workspace: {shown} (`cerveau rules`)", "warning"
    if decision.decision == "approved_session":
        return f"you approved for this session: {shown} (revoke from Ctrl+P)", "warning"
    if decision.decision == "denied_always":
        return f"you refused always in this workspace: {shown} (`cerveau rules`)", "warning"
    if decision.decision == "approved":
        return f"you approved once: {what}", "info"
    return None
