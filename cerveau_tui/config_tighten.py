"""A repository's `.cerveau/config.toml` may only tighten: what each setting calls tighter.

The attack: a cloned repository's config raised its own bounds (`bash_timeout_s`, `output_cap`,
the loop limits) and set a `[done] gate` command that the first precheck ran unasked, and nothing
said so, because the review named six settings and the attack used the others. So the review is
an allow list over the whole model instead: every field of Settings (walked through its sections)
is compared, the workspace's value against the one it would replace, and a value applies without
the person's trust only when its field's rule proves it no looser. A field that declares no rule
is held back whenever the workspace changes it, so a setting added next year is safe before
anyone thinks about it.

A rule is declared beside its field (`Annotated[float, SMALLER]`), so the field and the reason it
may be lowered are read together. `meet(base, asked)` is the value that applies without trust:
`asked` when it is no looser than `base`, else the tightest value both allow where one exists
(the union of two deny lists), else `base`. A key is held back when `meet` is not `asked`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

__all__ = [
    "ALLOW_LIST",
    "DENY_LIST",
    "GATE",
    "HELD",
    "NEUTRAL",
    "RULES",
    "SMALLER",
    "Bound",
    "Flag",
    "Held",
    "Ordered",
    "Rule",
    "plain",
    "review",
    "rule_of",
    "withhold",
]


class Rule(Protocol):
    def meet(self, base: Any, asked: Any) -> Any:
        """What applies without trust when the layers below say `base` and the workspace `asked`."""
        ...

    def why(self, base: Any, asked: Any) -> str:
        """Why `asked` is looser, in words a person acts on."""
        ...


@dataclass(frozen=True)
class _Held:
    """The default: any change is held back (it runs a program, or points the harness somewhere,
    or nobody has said which way is tighter)."""

    reason: str = "a workspace config may not change it"

    def meet(self, base: Any, asked: Any) -> Any:
        return asked if asked == base else base

    def why(self, base: Any, asked: Any) -> str:
        return self.reason


@dataclass(frozen=True)
class _Neutral:
    """Either way protects the same: presentation, or when the window is compacted."""

    def meet(self, base: Any, asked: Any) -> Any:
        return asked

    def why(self, base: Any, asked: Any) -> str:  # pragma: no cover - never held
        return ""


@dataclass(frozen=True)
class Bound:
    """A number where smaller is tighter (a timeout, a cap, a limit, a repeat threshold).

    `unset` is the value that means "not a number the person chose": 0 for "no ceiling", None
    for "derived". What it stands for is known only as a range [`low`, `high`] (the family
    default of max_iterations is 16 to 50, decided on the model at run time), so a value applies
    without trust only when even its loosest reading is no looser than the base's tightest."""

    unset: Any = object()  # by default no value is special
    low: float = math.inf
    high: float = math.inf

    def _range(self, v: Any) -> tuple[float, float]:
        return (self.low, self.high) if v == self.unset else (float(v), float(v))

    def meet(self, base: Any, asked: Any) -> Any:
        if asked == base:
            return asked
        return asked if self._range(asked)[1] <= self._range(base)[0] else base

    def why(self, base: Any, asked: Any) -> str:
        return "raises a bound"


@dataclass(frozen=True)
class Flag:
    """A switch whose `tight` side runs less or shows more."""

    tight: bool

    def meet(self, base: Any, asked: Any) -> Any:
        return asked if asked in (base, self.tight) else base

    def why(self, base: Any, asked: Any) -> str:
        return f"{'on' if asked else 'off'} is the looser side"


@dataclass(frozen=True)
class Ordered:
    """Modes by strictness, as a partial order: `stricter[m]` is every mode at least as strict
    as m. A partial order because some are not comparable: approval `never` denies the crossings
    that `untrusted` asks about, while `untrusted` asks about commands `never` runs silently."""

    stricter: Mapping[str, frozenset[str]]

    @classmethod
    def chain(cls, *tightest_first: str) -> Ordered:
        return cls({m: frozenset(tightest_first[: i + 1]) for i, m in enumerate(tightest_first)})

    def meet(self, base: Any, asked: Any) -> Any:
        return asked if asked in self.stricter.get(base, {base}) else base

    def why(self, base: Any, asked: Any) -> str:
        return f"protects less than {base!r}"


@dataclass(frozen=True)
class _DenyList:
    """A list of things kept away: adding is tighter, dropping one of the base's is not."""

    def meet(self, base: Any, asked: Any) -> Any:
        return [*asked, *(x for x in base if x not in asked)]

    def why(self, base: Any, asked: Any) -> str:
        return "drops " + ", ".join(str(x) for x in base if x not in asked)


@dataclass(frozen=True)
class _AllowList:
    """A list of things let through: dropping is tighter, adding one is not."""

    def meet(self, base: Any, asked: Any) -> Any:
        return [x for x in asked if x in base]

    def why(self, base: Any, asked: Any) -> str:
        return "adds " + ", ".join(str(x) for x in asked if x not in base)


def _allows(rule: Any) -> bool:
    return getattr(rule, "action", None) == "allow"


@dataclass(frozen=True)
class _Rules:
    """Policy rules: each is judged on its own (policy.py asks deny, then allow, then ask, in no
    order of the list), so a new `ask`/`deny` is tighter, a new `allow` or a dropped base
    `ask`/`deny` is not."""

    def meet(self, base: Any, asked: Any) -> Any:
        kept = [r for r in asked if not _allows(r) or r in base]
        return [*kept, *(r for r in base if r not in asked and not _allows(r))]

    def why(self, base: Any, asked: Any) -> str:
        parts = [
            f"drops `{r.pattern}` ({r.action})" for r in base if r not in asked and not _allows(r)
        ]
        parts += [f"allows `{r.pattern}`" for r in asked if r not in base and _allows(r)]
        return ", ".join(parts)


#: `[done] gate` values that run nothing of the file's own: the stack's detected check (run
#: inside the sandbox, as the model's commands are), none, or undecided.
_GATE_WORDS = frozenset({"", "auto", "off"})


@dataclass(frozen=True)
class _Gate:
    def meet(self, base: Any, asked: Any) -> Any:
        return asked if asked == base or str(asked).strip() in _GATE_WORDS else base

    def why(self, base: Any, asked: Any) -> str:
        return "a command the first precheck would run unasked"


HELD: Rule = _Held()
NEUTRAL: Rule = _Neutral()
SMALLER: Rule = Bound()
DENY_LIST: Rule = _DenyList()
ALLOW_LIST: Rule = _AllowList()
RULES: Rule = _Rules()
GATE: Rule = _Gate()


@dataclass(frozen=True)
class Held:
    """One workspace value not applied: its dotted key, what was asked, what is in force."""

    key: str
    asked: Any
    applies: Any
    why: str

    def describe(self) -> str:
        return f"{self.key} = {_show(self.asked)} ({self.why}; in force: {_show(self.applies)})"


def rule_of(field: Any) -> Rule | None:
    found = [m for m in getattr(field, "metadata", ()) if callable(getattr(m, "meet", None))]
    return found[-1] if found else None


def review(base: BaseModel, asked: BaseModel, prefix: str = "") -> list[Held]:
    """Every field where `asked` (with the workspace layer) is not provably tighter than `base`
    (without it). A section (a field holding a model, with no rule of its own) is walked; any
    other field without a rule is HELD."""
    out: list[Held] = []
    for name, field in type(asked).model_fields.items():
        a, b = getattr(asked, name), getattr(base, name)
        rule = rule_of(field)
        key = f"{prefix}{name}"
        if rule is None and isinstance(a, BaseModel) and type(a) is type(b):
            out += review(b, a, f"{key}.")
            continue
        rule = rule or HELD
        applies = rule.meet(b, a)
        if applies != a:
            out.append(Held(key, a, applies, rule.why(b, a)))
    return out


def withhold(table: dict[str, Any], held: Iterable[Held], base: BaseModel) -> dict[str, Any]:
    """The workspace layer with each held key taken out (the layers below decide it), or set to
    what applies when that is a combination of both (a deny list's union)."""
    out = _copy(table)
    for h in held:
        *parents, last = h.key.split(".")
        node: Any = out
        for p in parents:
            node = node.get(p) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            continue
        below: Any = base
        for p in h.key.split("."):
            below = getattr(below, p)
        if h.applies == below:
            node.pop(last, None)
        else:
            node[last] = plain(h.applies)
    return out


def plain(value: Any) -> Any:
    """A validated value back as config input (for the layer, and for JSON in the event)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


def _copy(table: dict[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) if isinstance(v, dict) else v for k, v in table.items()}


def _show(value: Any, limit: int = 80) -> str:
    text = repr(plain(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."
