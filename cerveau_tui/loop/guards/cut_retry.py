"""After a tool call is cut off at the token cap, the next request differs from the one cut.

Why: `commit_plan` was cut off at the 1,024-token cap three times in a row; the harness said "do
not send it again whole" and then offered the same tool at the same cap: 9 minutes, nothing done
(issue 24). Words do not change what a small model sends; the request can.

Rules (`CutRetries.after_cut`), pure:
1. The window has room: the retry's cap doubles, up to half the window and never past the room
   the prompt leaves (at least half as much again, or it is no change worth a round). The model and the person are told the new cap.
2. It has not: the tool that was cut is bounded for the rest of the turn so the whole call fits
   the cap (lists of a few items, each text a share of about two characters a token: low,
   because code and JSON escapes run three to four), and the model is told the bound. Cut again,
   the bound halves.
3. A bound too small to be worth a call: the tool is withheld for the next round (refused).
4. The server refused the cut reply before naming its tool (HTTP 500 "Failed to parse tool call
   arguments"): with no room for a larger cap, EVERY tool is bounded, the bound halving at each
   cut (none can be withheld: the cut one is not known). Found by probing: a 4k window at a 2,048
   cap was sent the same request three times until the turn ended on model errors.
A shape (tool, cap, bound) is never offered twice in a turn.

Where a bound acts (issue 36): the tools sent never change mid-session, since native tools are
part of the prompt's prefix and a changed schema re-reads the whole prompt (loop/narrow.py). So
the bounded schemas (`request`) narrow only constrained mode's action grammar, a request field
outside the prompt; in native mode the bound is the message the model reads and a withheld tool
is refused at dispatch (`withheld`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .truncation import truncated_call_message

CHARS_PER_TOKEN = 2
FEW_ITEMS = 3
MIN_CHARS = 64  # under this a text field cannot carry a useful part of anything
MARGIN = 256  # the window's room less this is what a reply may take (framing, counting error)
EVERY_TOOL = ""  # the cut's tool when the server did not name it: the bound applies to all


@dataclass(frozen=True)
class CutRetry:
    """What the request after a cut looks like, and what is said about it."""

    tool: str
    cut_at: int
    max_tokens: int
    chars: int | None = None  # the bound on the tool's call, in characters; None: not narrowed
    withheld: bool = False

    @property
    def reason(self) -> str:
        what = f"{self.tool or 'a tool call'} cut off at {self.cut_at} tokens"
        if self.max_tokens > self.cut_at:
            return f"{what}; the retry may take {self.max_tokens} tokens"
        if self.withheld:
            return f"{what} again; {self.tool} is not offered for the next reply"
        which = self.tool or "every tool"
        return f"{what}; {which} offered narrower (about {self.chars} characters a call)"

    @property
    def told(self) -> str:
        which = f"`{self.tool}` call" if self.tool else "last tool call"
        if self.max_tokens > self.cut_at:
            return (
                f"Your {which} was cut off: it reached the cap of {self.cut_at} tokens per reply "
                "before its JSON was closed, so it did not run and nothing was written. Your next "
                f"reply may take up to {self.max_tokens} tokens: send the call again, split into "
                "smaller calls if it is longer than that."
            )
        base = truncated_call_message(self.tool or None, self.cut_at)
        if self.withheld:
            return f"{base} `{self.tool}` is not offered for your next reply: make a smaller step."
        which = f"a `{self.tool}` call" if self.tool else "every tool call"
        return (
            f"{base} For the rest of this turn {which} holds at most {FEW_ITEMS} "
            f"items a list and about {self.chars} characters in all: send a short one."
        )


@dataclass
class CutRetries:
    """One turn's cuts: the shapes already offered and each tool's current bound."""

    offered: set[tuple[str, int, int | None]] = field(default_factory=set)
    bounds: dict[str, int] = field(default_factory=dict)
    withhold_next: set[str] = field(default_factory=set)
    withheld: frozenset[str] = frozenset()  # refused in the round of the last request

    def after_cut(self, tool: str, cap: int, n_ctx: int, used: int) -> CutRetry:
        bound = self.bounds.get(tool)
        self.offered.add((tool, cap, bound))
        room = max(0, n_ctx - used - MARGIN) if n_ctx else 0
        bigger = min(2 * cap, n_ctx // 2, room)
        # Half as much again at least: a few more tokens would be cut the same.
        if bigger >= cap * 3 // 2 and (tool, bigger, bound) not in self.offered:
            return CutRetry(tool, cap, bigger, bound)
        chars = cap * CHARS_PER_TOKEN if bound is None else bound // 2
        if tool == EVERY_TOOL:  # rule 4: nothing to withhold, every tool narrower
            self.bounds[tool] = max(1, chars)
            return CutRetry(tool, cap, cap, max(1, chars))
        if chars < MIN_CHARS:
            self.withhold_next.add(tool)
            return CutRetry(tool, cap, cap, bound, withheld=True)
        self.bounds[tool] = chars
        return CutRetry(tool, cap, cap, chars)

    def request(self, schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The schemas the next reply may use: the bounded ones narrowed, the withheld ones left
        out (for one request, whose round then refuses them: `withheld`)."""
        withheld, self.withhold_next = self.withhold_next, set()
        self.withheld = frozenset(withheld)
        out = []
        for s in schemas:
            name = s.get("name", "")
            if name in withheld:
                continue
            bounds = [b for b in (self.bounds.get(name), self.bounds.get(EVERY_TOOL)) if b]
            out.append(narrowed_schema(s, min(bounds)) if bounds else s)
        return out


def _slots(node: dict[str, Any]) -> int:
    """How many text fields a call of this schema holds once its lists are a few items long."""
    if "enum" in node or "const" in node:
        return 0
    if "anyOf" in node:
        return max((_slots(a) for a in node["anyOf"]), default=0)
    kind = node.get("type")
    if kind == "string":
        return 1
    if kind == "array":
        return FEW_ITEMS * _slots(node.get("items", {}))
    if kind == "object":
        return sum(_slots(p) for p in node.get("properties", {}).values())
    return 0


def _bound(node: dict[str, Any], each: int) -> None:
    if "enum" in node or "const" in node:
        return
    for alt in node.get("anyOf", []):
        _bound(alt, each)
    kind = node.get("type")
    if kind == "string":
        node["maxLength"] = min(node.get("maxLength", each), each)
    elif kind == "array":
        node["maxItems"] = min(node.get("maxItems", FEW_ITEMS), FEW_ITEMS)
        _bound(node.get("items", {}), each)
    elif kind == "object":
        for prop in node.get("properties", {}).values():
            _bound(prop, each)


def narrowed_schema(schema: dict[str, Any], chars: int) -> dict[str, Any]:
    """A tool schema ({name, description, parameters}) whose every call fits in about `chars`
    characters: lists of at most FEW_ITEMS, the characters shared among its text fields. Only
    narrower than the tool's own (a bound is added, never lifted), so the tool accepts it all."""
    out = copy.deepcopy(schema)
    params = out.get("parameters") or {}
    each = max(1, chars // max(1, _slots(params)))
    _bound(params, each)
    return out
