"""An action the schema allows and the tool refuses is a bug (issue 24).

For every tool, the instances its own schema allows at the edges (the shortest strings, blank
strings where no rule forbids them, empty and full lists, each enum value, each optional field
present and absent) are generated from the schema alone, then validated by the tool's `Args`.
The generator refuses a keyword it does not know, so a new constraint cannot slip past it.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.tools.args import inline_refs
from cerveau_tui.tools.base import Tool, ToolContext, ToolState
from cerveau_tui.tools.explore import Explore
from cerveau_tui.tools.plan_tools import PLAN_TOOLS
from cerveau_tui.tools.registry import default_tools
from cerveau_tui.tools.skill import LoadSkill


class _NoSkills:
    def names(self) -> list[tuple[str, str]]:
        return []

    def body(self, name: str) -> str | None:
        return None


def every_tool() -> list[Tool]:
    return [*default_tools(), *(c() for c in PLAN_TOOLS), Explore(), LoadSkill(_NoSkills())]


KNOWN = {
    "type", "properties", "required", "items", "anyOf", "enum", "const", "default",
    "description", "minLength", "maxLength", "pattern", "minItems", "maxItems",
}  # fmt: skip
#: Candidate strings, from the edges in: empty, blank of each kind, one character, a digit (an
#: id a position may also take), a path, text with JSON's special characters, a non-ASCII
#: character, a NUL byte, a long one.
STRINGS = [
    "", " ", "\t", "\n", "\u00a0", "x", "1", ".", "a b", "../x", 'say "hi"\\', "é", "a\x00b",
    "x" * 5000,
]  # fmt: skip


def allowed_strings(schema: dict[str, Any]) -> list[str]:
    lo, hi = schema.get("minLength", 0), schema.get("maxLength")
    out = [s for s in STRINGS if len(s) >= lo and (hi is None or len(s) <= hi)]
    if "pattern" in schema:
        out = [s for s in out if re.search(schema["pattern"], s)]
    return out


def edges(schema: dict[str, Any]) -> list[Any]:
    """Values the schema allows, chosen at its edges."""
    unknown = set(schema) - KNOWN
    assert not unknown, f"the edge generator does not know {unknown}: teach it first"
    if "const" in schema:
        return [schema["const"]]
    if "enum" in schema:
        return list(schema["enum"])
    if "anyOf" in schema:
        return [v for alt in schema["anyOf"] for v in edges(alt)]
    kind = schema.get("type")
    if kind == "string":
        return allowed_strings(schema)
    if kind == "integer":
        return [-1, 0, 1, 10**9]
    if kind == "null":
        return [None]
    if kind == "array":
        item = edges(schema.get("items", {"type": "string"}))
        lo, hi = schema.get("minItems", 0), schema.get("maxItems", 3)
        varied = [[item[i % len(item)] for i in range(n)] for n in sorted({lo, hi})]
        # The longest list of ONE item repeated, each item's in turn: what `maxItems` allows
        # and a rule across items (unique ids) may refuse.
        return varied + [[v] * hi for v in item if hi > 1]
    if kind == "object":
        return objects(schema)
    raise AssertionError(f"no edges for {schema}")


def objects(schema: dict[str, Any]) -> list[dict[str, Any]]:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    base = {k: edges(props[k])[0] for k in required}
    out = [base, {k: edges(v)[0] for k, v in props.items()}]
    for name, sub in props.items():  # one field at a time through all its edges
        out += [{**base, name: v} for v in edges(sub)]
    return out


@pytest.mark.parametrize("tool", every_tool(), ids=lambda t: t.name)
def test_every_instance_the_schema_allows_at_its_edges_the_tool_accepts(
    tool: Tool, tmp_path: Path
) -> None:
    """Accepts: its model validates the arguments and `declare` (where a blank path used to be
    refused) names what the call touches without an argument error."""
    ctx = ToolContext(workspace=tmp_path, state=ToolState())
    instances = edges(tool.schema()["parameters"])
    assert instances
    for args in instances:
        validated = tool.Args.model_validate(args)
        tool.declare(validated, ctx)


def test_a_blank_command_the_old_schema_allowed_is_now_outside_the_schema() -> None:
    from cerveau_tui.tools.bash import Bash

    command = Bash.schema()["parameters"]["properties"]["command"]
    assert command["minLength"] >= 1
    assert "" not in allowed_strings(command) and " " not in allowed_strings(command)


def test_the_generator_catches_a_schema_wider_than_its_tool() -> None:
    """Control: a hand-written schema that forgot the rule yields an instance the tool refuses."""
    from pydantic import ValidationError

    from cerveau_tui.tools.bash import Bash

    loose = {"type": "object", "properties": {"command": {"type": "string"}}}
    blank = [a for a in edges(loose) if a.get("command", "x").strip() == ""]
    assert blank
    with pytest.raises(ValidationError):
        Bash.Args.model_validate(blank[0])


@pytest.mark.parametrize("tool", every_tool(), ids=lambda t: t.name)
def test_each_tools_schema_is_generated_from_its_argument_model(tool: Tool) -> None:
    assert tool.schema()["parameters"] == inline_refs(tool.Args.model_json_schema())


def test_no_combination_of_required_fields_at_their_edges_is_refused() -> None:
    """Pairs as well as singles: two fields each at an allowed edge are still allowed."""
    from cerveau_tui.tools.files import EditFile

    props = EditFile.schema()["parameters"]["properties"]
    for path, old in itertools.product(edges(props["path"]), edges(props["old"])):
        EditFile.Args.model_validate({"path": path, "old": old, "new": ""})


def _explicit_ids(args: dict[str, Any]) -> list[str]:
    return [i for s in args.get("steps", []) if (i := str(s.get("id", "")).strip())]


def test_every_plan_the_schema_allows_at_its_edges_commits() -> None:
    """Run, not only validated: commit_plan's rule across steps (each its own id) is one the
    schema cannot state. A step without an id takes a free number: `[{"id": "2"}, {}]` was
    refused as two steps with id '2'. Two steps GIVEN the same id stay refused
    (tests/plan/test_plan_tools.py), the one gap left: JSON Schema has no unique-by-field."""
    from cerveau_tui.tools.base import ToolError
    from cerveau_tui.tools.plan_tools import CommitPlan

    tool = CommitPlan()
    refused = []
    for args in edges(tool.schema()["parameters"]):
        ctx = ToolContext(workspace=Path("/nonexistent-ws"), state=ToolState())
        given = _explicit_ids(args)
        try:
            tool.run(CommitPlan.Args.model_validate(args), ctx)
        except ToolError as exc:
            if len(set(given)) == len(given):
                refused.append((args, str(exc)))
    assert refused == []


def test_a_step_without_an_id_never_takes_one_a_later_step_was_given() -> None:
    from cerveau_tui.tools.plan_tools import CommitPlan

    ctx = ToolContext(workspace=Path("/nonexistent-ws"), state=ToolState())
    steps = [{"title": "a"}, {"id": "1", "title": "b"}, {"id": "2", "title": "c"}, {"title": "d"}]
    CommitPlan().run(CommitPlan.Args.model_validate({"steps": steps}), ctx)
    assert ctx.plan is not None
    assert [s.id for s in ctx.plan.report().steps] == ["3", "1", "2", "4"]
