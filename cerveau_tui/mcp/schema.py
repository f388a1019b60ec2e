"""A tool's arguments checked against its inputSchema by the harness, before the call.

The subset of JSON Schema that tools' input schemas use (what pydantic and zod emit): `type`
(one or a list), `enum`, `const`, `properties`, `required`, `additionalProperties`, `items`,
the length, count and range bounds, `pattern`, `anyOf`/`oneOf`/`allOf`, and `$ref` into the
schema's own `$defs`/`definitions`. An unknown keyword passes (the server checks again; a
false refusal would stop a call the server takes). Not the `jsonschema` package: it came with
four dependencies for this, and its `pattern` is Python's backtracking `re`, where a server's
pattern could hang the harness; this one compiles patterns with RE2 (linear time).

`check` returns the problems as short lines the model can act on; none means the call may go.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import re2

#: Nesting followed at most (a schema whose $ref points at itself would recurse forever).
MAX_DEPTH = 32
MAX_PROBLEMS = 8
#: Schema nodes one check visits at most. Depth alone bounds nothing: found by probing, a
#: server's `{"anyOf": [{"$ref": "#"}, x4]}` is 4^16 visits within MAX_DEPTH, and held the
#: harness's dispatch thread at 100% CPU on the first mcp_call (two options: 0.6 s). Past the
#: budget the call is refused, nothing sent (a schema that big checks nothing a person can read).
MAX_STEPS = 100_000


@dataclass
class _Walk:
    root: dict[str, Any]
    steps: int = MAX_STEPS


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _is(value: Any, kind: str) -> bool:
    py = _TYPES.get(kind)
    if py is None:
        return True
    if isinstance(value, bool) and kind != "boolean":
        return False  # True is an int to Python, never to JSON
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, py)


def _kind(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is(value, name):
            return name
    return type(value).__name__


def check(schema: dict[str, Any], value: Any) -> list[str]:
    problems: list[str] = []
    walk = _Walk(schema)
    _check(schema, value, "arguments", walk, problems, 0)
    if walk.steps < 0:
        return [f"the tool's schema takes more than {MAX_STEPS} steps to check; not checked"]
    return problems[:MAX_PROBLEMS]


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any] | None:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            found = (root.get(prefix[2:-1]) or {}).get(ref[len(prefix) :])
            return found if isinstance(found, dict) else None
    return root if ref == "#" else None


def _check(schema: Any, value: Any, at: str, walk: _Walk, out: list[str], depth: int) -> None:
    walk.steps -= 1
    if not isinstance(schema, dict) or depth > MAX_DEPTH or len(out) >= MAX_PROBLEMS:
        return
    if walk.steps < 0:
        return
    if "$ref" in schema:
        target = _resolve(str(schema["$ref"]), walk.root)
        if target is not None:
            _check(target, value, at, walk, out, depth + 1)
    kinds = schema.get("type")
    if kinds is not None:
        wanted = [kinds] if isinstance(kinds, str) else [k for k in kinds if isinstance(k, str)]
        if wanted and not any(_is(value, k) for k in wanted):
            out.append(f"{at}: expected {' or '.join(wanted)}, got {_kind(value)}")
            return
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        shown = ", ".join(repr(v) for v in schema["enum"][:10])
        out.append(f"{at}: must be one of {shown}")
    if "const" in schema and value != schema["const"]:
        out.append(f"{at}: must be {schema['const']!r}")
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            fits = sum(1 for o in options if not _problems(o, value, at, walk, depth))
            if fits == 0 or (key == "oneOf" and fits > 1):
                out.append(f"{at}: matches {fits} of the {len(options)} allowed shapes ({key})")
    for sub in schema.get("allOf") or []:
        _check(sub, value, at, walk, out, depth + 1)
    if isinstance(value, dict):
        _object(schema, value, at, walk, out, depth)
    elif isinstance(value, list):
        _array(schema, value, at, walk, out, depth)
    elif isinstance(value, str):
        _string(schema, value, at, out)
    elif _is(value, "number"):
        _number(schema, value, at, out)


def _problems(schema: Any, value: Any, at: str, walk: _Walk, depth: int) -> list[str]:
    found: list[str] = []
    _check(schema, value, at, walk, found, depth + 1)
    return found


def _object(
    schema: dict[str, Any],
    value: dict[str, Any],
    at: str,
    walk: _Walk,
    out: list[str],
    depth: int,
) -> None:
    raw = schema.get("properties")
    props: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for name in schema.get("required") or []:
        if isinstance(name, str) and name not in value:
            out.append(f"{at}.{name}: required")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            _check(props[key], item, f"{at}.{key}", walk, out, depth + 1)
        elif extra is False:
            known = ", ".join(sorted(props)) or "none"
            out.append(f"{at}.{key}: not a parameter of this tool (its parameters: {known})")
        elif isinstance(extra, dict):
            _check(extra, item, f"{at}.{key}", walk, out, depth + 1)


def _array(
    schema: dict[str, Any],
    value: list[Any],
    at: str,
    walk: _Walk,
    out: list[str],
    depth: int,
) -> None:
    _size(schema, len(value), ("minItems", "maxItems"), "items", at, out)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value[:1000]):
            _check(items, item, f"{at}[{i}]", walk, out, depth + 1)


def _size(
    schema: dict[str, Any], size: int, keys: tuple[str, str], unit: str, at: str, out: list[str]
) -> None:
    low, high = (schema.get(k) for k in keys)
    if isinstance(low, int) and size < low:
        out.append(f"{at}: at least {low} {unit}")
    if isinstance(high, int) and size > high:
        out.append(f"{at}: at most {high} {unit}")


def _string(schema: dict[str, Any], value: str, at: str, out: list[str]) -> None:
    _size(schema, len(value), ("minLength", "maxLength"), "characters", at, out)
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re2.search(pattern, value) is not None
        except Exception:  # noqa: BLE001 - a pattern RE2 cannot take is the server's to check
            matched = True
        if not matched:
            out.append(f"{at}: does not match the pattern {pattern[:80]!r}")


def _number(schema: dict[str, Any], value: float, at: str, out: list[str]) -> None:
    bounds = (
        ("minimum", lambda b: value < b, "at least"),
        ("maximum", lambda b: value > b, "at most"),
        ("exclusiveMinimum", lambda b: value <= b, "more than"),
        ("exclusiveMaximum", lambda b: value >= b, "less than"),
    )
    for key, broken, words in bounds:
        bound = schema.get(key)
        if _is(bound, "number") and broken(bound):
            out.append(f"{at}: {words} {bound}")
