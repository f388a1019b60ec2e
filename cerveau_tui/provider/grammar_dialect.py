"""The dialect of JSON Schema that llama-server's grammar converter reads, from standard schema.

Why: the converter (vendor/llama.cpp/common/json-schema.cpp, json-schema-to-grammar.cpp) reads
`minLength`, `maxLength`, `minItems`, `maxItems`, `enum`, `const`, `anyOf` and integer bounds as
JSON Schema does, but a `pattern` only when anchored (`^...$`) and built of literal characters,
classes and groups: no `\\s`. An unreadable pattern is dropped with a warning, and `minLength` with
it, because for a string the pattern wins: `""` was allowed again. Pure.
"""

from __future__ import annotations

from typing import Any

#: JSON Schema's "contains a non-whitespace character" and "a path: that, and no NUL byte"
#: (tools/args.py NOT_BLANK and PATH).
_NOT_BLANK = r"\S"
_PATH = r"^[^\x00]*[^\s\x00][^\x00]*$"
# The same rule written for llama-server, which matches a pattern against the JSON TEXT between
# the quotes, not the decoded string: the first character is neither whitespace (ASCII or
# Unicode) nor an escape of one (`\t`, `\n`, `\u0020`); the rest is any valid JSON string
# body. Narrower than the tool (a leading space is refused), never wider.
_JSON_CHAR = r'(?:[^"\\\x00-\x1F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})'
_FIRST_NOT_BLANK = (
    r'(?:[^ "\\\x00-\x1F\x7F\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]'
    r'|\\["\\/b])'
)
GRAMMAR_NOT_BLANK = f"^{_FIRST_NOT_BLANK}{_JSON_CHAR}*$"
# A path's characters: as any, less `\u0000` (a raw NUL is no JSON already).
_PATH_CHAR = (
    r'(?:[^"\\\x00-\x1F]|\\["\\/bfnrt]|\\u(?:[1-9a-fA-F][0-9a-fA-F]{3}|0[1-9a-fA-F][0-9a-fA-F]{2}'
    r"|00[1-9a-fA-F][0-9a-fA-F]|000[1-9a-fA-F]))"
)
GRAMMAR_PATH = f"^{_FIRST_NOT_BLANK}{_PATH_CHAR}*$"
_CHARS = {_NOT_BLANK: _JSON_CHAR, _PATH: _PATH_CHAR}


def grammar_schema(node: Any) -> Any:
    """A tool's argument schema in the dialect llama-server's grammar converter reads: each
    not-blank or path pattern rewritten (above). Every other keyword we emit (`minLength`, `maxItems`,
    `enum`, `anyOf`) it reads as JSON Schema does (vendor/llama.cpp/common/json-schema.cpp)."""
    if isinstance(node, list):
        return [grammar_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: grammar_schema(v) for k, v in node.items()}
    pattern = out.get("pattern")  # under `properties` it may be a field NAMED pattern (search)
    chars = _CHARS.get(pattern) if isinstance(pattern, str) else None
    if chars is not None:
        # The pattern wins over maxLength in the converter, so a bound goes into the pattern.
        most = out.get("maxLength")
        rest = f"{{0,{max(0, most - 1)}}}" if isinstance(most, int) else "*"
        out["pattern"] = f"^{_FIRST_NOT_BLANK}{chars}{rest}$"
    return out
