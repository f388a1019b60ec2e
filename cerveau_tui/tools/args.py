"""The constraints a tool's arguments carry, declared once, where pydantic and the schema both read.

Why: the constrained action schema accepted `bash {"command": ""}`; the tool then refused it as
"command is empty", three rounds running, until the repeat guard ended the turn. A rule the tool
enforces in code and the schema does not state is a round the model is invited to waste. So the
rule lives in the argument model: pydantic enforces it on every call, and `Tool.schema()` emits it
(`minLength`, `pattern`, `enum`, `maxItems`) for the grammar that shapes the model's reply.

Rule: the schema may be narrower than the tool, never wider (tests/tools/test_schema_edges.py
generates the schema's edge instances for every tool and validates each with the tool's model).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field

#: JSON Schema's own words for "contains a character that is not whitespace" (a search, as JSON
#: Schema patterns are). llama-server's grammar cannot read `\S`; provider/constrained.py writes
#: it in a form the grammar converter can (`grammar_schema`).
NOT_BLANK = r"\S"
_NOT_BLANK = re.compile(NOT_BLANK)


def _not_blank(value: str) -> str:
    # Python's \S is the same set as str.strip()'s whitespace: what the tools themselves test.
    if not _NOT_BLANK.search(value):
        raise ValueError("is blank; give a value (it cannot be only spaces)")
    return value


#: A command, a name: empty or only spaces is never meant. min_length as well as the pattern, so
#: a schema reader that drops patterns still refuses the empty string.
NonBlank = Annotated[
    str,
    Field(min_length=1, json_schema_extra={"pattern": NOT_BLANK}),
    AfterValidator(_not_blank),
]

#: A path: not blank, and no NUL byte (no file name holds one; resolve_path refuses it).
PATH = r"^[^\x00]*[^\s\x00][^\x00]*$"
_PATH = re.compile(PATH)


def _path(value: str) -> str:
    _not_blank(value)
    if not _PATH.search(value):
        raise ValueError("contains a NUL byte, which no path holds")
    return value


PathArg = Annotated[
    str, Field(min_length=1, json_schema_extra={"pattern": PATH}), AfterValidator(_path)
]

#: Text that may be only spaces (an `old` made of indentation is a real edit) but not empty.
NonEmpty = Annotated[str, Field(min_length=1)]


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with each `$ref` to its `$defs` replaced by the definition and every pydantic
    `title` dropped: small models (and some chat templates) read a flat shape better, and the
    titles are class names that cost prompt tokens for nothing. Our models are not recursive."""
    defs = schema.get("$defs", {})

    def walk(node: Any, key: str = "") -> Any:
        if isinstance(node, list):
            return [walk(x) for x in node]
        if not isinstance(node, dict):
            return node
        if key == "properties":  # property NAMES are not keywords: a field called `title` stays
            return {name: walk(sub) for name, sub in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            merged = {
                **defs[ref.removeprefix("#/$defs/")],
                **{k: v for k, v in node.items() if k != "$ref"},
            }
            return walk(merged)
        return {k: walk(v, k) for k, v in node.items() if k not in ("title", "$defs")}

    out: dict[str, Any] = walk(schema)
    return out
