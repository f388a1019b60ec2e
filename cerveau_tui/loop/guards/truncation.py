"""Retry classification: a tool call cut off at the token cap vs. a tool call that is wrong.

When generation hits max_tokens mid-string the arguments have no closing quote or brace. The model
does not need to rethink, it needs to split the write into smaller calls, and it must be told
exactly that: telling it to "fix the JSON" when the real problem was the cap sends it in circles
(the field reports 6+ rounds each stopping at exactly 8,192 tokens, ~476k tokens burnt). Merely
wrong JSON (a trailing comma, single quotes, garbage) is the other case: fix the arguments.

Cut-off arguments never go back into the history: llama-server answers HTTP 500 "Failed to parse
tool call arguments as JSON" when it meets them again (see reference/llama-server.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

_PARSE_FAILURE = re.compile(
    r"failed to parse tool call arguments as json|failed to parse input at pos|"
    r"does not match the expected peg-native format",
    re.I,
)
# What nlohmann::json (llama-server's parser) says when the text simply ENDED.
_CUT_OFF_TEXT = re.compile(
    r"missing closing quote|unexpected end of input|unterminated string|end of input", re.I
)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = ("true", "false", "null")
_ESCAPES = set('"\\/bfnrtu')
_HEX = set("0123456789abcdefABCDEF")


def _scan(text: str) -> str:
    """Classify JSON text: "complete", "prefix" (valid so far but unfinished) or "invalid".

    A prefix scanner rather than json.loads, because json.loads only says "invalid" for both a
    cut-off document and a broken one; the scanner says where it broke: at the end (cut off) or
    before it (wrong). Control characters inside strings are tolerated, as json.loads(strict=False)
    does, since they do not decide which of the two cases this is.
    """
    stack: list[str] = []  # "{" or "["
    # expect: value | key_or_close | key | colon | comma_or_close | value_or_close | end
    expect = "value"
    i, n = 0, len(text)

    def value_done() -> str:
        return "comma_or_close" if stack else "end"

    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if expect == "end":
            return "invalid"
        if expect == "colon":
            if c != ":":
                return "invalid"
            expect, i = "value", i + 1
            continue
        if expect == "comma_or_close":
            top = stack[-1]
            if c == ",":
                expect = "key" if top == "{" else "value"
            elif (c == "}" and top == "{") or (c == "]" and top == "["):
                stack.pop()
                expect = value_done()
            else:
                return "invalid"
            i += 1
            continue
        if expect in ("key", "key_or_close"):
            if c == "}" and expect == "key_or_close":
                stack.pop()
                expect, i = value_done(), i + 1
                continue
            if c != '"':
                return "invalid"
            end = _string_end(text, i)
            if end == -2:
                return "invalid"
            if end == -1:
                return "prefix"
            expect, i = "colon", end
            continue
        # a value (or, in an array just opened, a close)
        if c == "]" and expect == "value_or_close":
            stack.pop()
            expect, i = value_done(), i + 1
            continue
        if c == "{":
            stack.append("{")
            expect, i = "key_or_close", i + 1
        elif c == "[":
            stack.append("[")
            expect, i = "value_or_close", i + 1
        elif c == '"':
            end = _string_end(text, i)
            if end == -2:
                return "invalid"
            if end == -1:
                return "prefix"
            expect, i = value_done(), end
        elif c == "-" or c.isdigit():
            j = i
            while j < n and text[j] in "+-0123456789.eE":
                j += 1
            tok = text[i:j]
            if _NUMBER.fullmatch(tok):
                expect, i = value_done(), j
            elif j == n and _NUMBER.fullmatch(tok + "0"):
                return "prefix"
            else:
                return "invalid"
        elif c.isalpha():
            j = i
            while j < n and text[j].isalpha():
                j += 1
            tok = text[i:j]
            if tok in _LITERALS:
                expect, i = value_done(), j
            elif j == n and any(lit.startswith(tok) for lit in _LITERALS):
                return "prefix"
            else:
                return "invalid"
        else:
            return "invalid"
    return "complete" if expect == "end" else "prefix"


def _string_end(text: str, i: int) -> int:
    """Index just past the string opening at i; -1 if the text ends inside it, -2 if invalid."""
    j, n = i + 1, len(text)
    while j < n:
        c = text[j]
        if c == '"':
            return j + 1
        if c == "\\":
            if j + 1 >= n:
                return -1
            esc = text[j + 1]
            if esc not in _ESCAPES:
                return -2
            if esc == "u":
                digits = text[j + 2 : j + 6]
                if any(d not in _HEX for d in digits):
                    return -2
                if len(digits) < 4:
                    return -1
                j += 6
                continue
            j += 2
            continue
        j += 1
    return -1


def looks_truncated(text: str) -> bool:
    """True when `text` is JSON cut off at the end (a valid prefix, unfinished); False for complete
    JSON and for JSON that is wrong before its end (trailing comma mid-way, single quotes, junk)."""
    if not text or not text.strip():
        return False
    return _scan(text) == "prefix"


def is_truncated_tool_call(
    message: str | None = None, *, finish_reason: str | None = None, arguments: str | None = None
) -> bool:
    """Whether a failed tool call was cut off by the token cap rather than wrong.

    `message` is a server error text (llama-server's 500 when it cannot parse the call);
    `finish_reason` and `arguments` are what a completion carried back.
    """
    if arguments is not None and finish_reason in (None, "length"):
        if looks_truncated(arguments):
            return True
        if finish_reason == "length" and not arguments.strip():
            return True  # cut before the first character of the arguments
        if _scan(arguments) in ("complete", "invalid"):
            return False  # the text itself says whether it was cut; the message cannot overrule it
    if message and _PARSE_FAILURE.search(message):
        if _CUT_OFF_TEXT.search(message):
            return True
        # "Failed to parse input at pos N" says nothing about why; the cap does.
        return finish_reason == "length"
    return False


def truncated_call_message(tool: str | None, max_tokens: int) -> str:
    """`tool`: the call's name when known; None when the server refused the reply before
    naming it (the model was told "Your `your last tool` call")."""
    which = f"`{tool}` call" if tool else "last tool call"
    return (
        f"Your {which} was cut off: its arguments reached the cap of {max_tokens} tokens per "
        "reply before the JSON was closed, so the call did not run and nothing was written. The "
        "call was not wrong, it was too long: do not send it again whole. Split it into smaller "
        f"calls, each well under {max_tokens} tokens: `write_file` the first part of the file, then "
        "add the rest with `edit_file` in steps (old = the current last lines, new = those lines "
        "followed by the next part), or make a large change as several `edit_file` calls."
    )


def _type_of(prop: dict[str, Any]) -> str:
    if "type" in prop:
        t = prop["type"]
        return "|".join(t) if isinstance(t, list) else str(t)
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return "|".join(_type_of(p) for p in prop[key])
    if "enum" in prop:
        return "one of " + "/".join(json.dumps(v) for v in prop["enum"])
    return "any"


def expected_parameters(schema: dict[str, Any]) -> str:
    """ "path (string, required), timeout (integer|null, optional: seconds)" from a tool schema
    (either the whole {"name", "parameters"} schema or the parameters object itself)."""
    params = schema.get("parameters", schema) if isinstance(schema, dict) else {}
    props: dict[str, Any] = params.get("properties", {}) or {}
    required = set(params.get("required", []) or [])
    parts = []
    for name, prop in props.items():
        desc = f"{name} ({_type_of(prop)}, {'required' if name in required else 'optional'}"
        if prop.get("description"):
            desc += f": {prop['description']}"
        parts.append(desc + ")")
    return ", ".join(parts) if parts else "no parameters"


def wrong_args_message(tool: str, error: str, schema: dict[str, Any]) -> str:
    err = " ".join(str(error).split())
    if len(err) > 300:
        err = err[:299] + "…"
    return (
        f"Your `{tool}` call has invalid arguments, so it did not run: {err}. "
        f"`{tool}` takes: {expected_parameters(schema)}. Send the call again with the arguments as "
        "one JSON object with exactly these fields (double-quoted keys and strings, no trailing "
        "commas)."
    )
